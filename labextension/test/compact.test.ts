import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import compact, { barWidth, type ICompactState } from '../src/widgets/compact';
import { mount, one, settle } from './fake-model';

const NOW = 1_700_000_000;

function state(patch: Partial<ICompactState> = {}): ICompactState {
  return {
    tool: 'slow_compute',
    server: 'demo',
    label: 'seconds=2 label=t3',
    status: 'working',
    message: 'step 1/4',
    progress: null,
    started: NOW - 3,
    finished: null,
    done: false,
    failed: false,
    cancelling: false,
    sent_at: NOW,
    ...patch
  };
}

describe('compact task widget', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW * 1000);
  });
  afterEach(() => {
    vi.useRealTimers();
    document.body.replaceChildren();
  });

  it('shows one task on one line, an activity bar without a total', () => {
    const { el } = mount(compact, state());
    expect(one(el, '.mtj-badge').textContent).toBe('working');
    expect(one(el, '.mtj-compact-name').textContent).toBe(
      'slow_compute seconds=2 label=t3'
    );
    expect(one(el, '.mtj-compact-message').textContent).toBe('step 1/4');
    expect(one(el, '.mtj-compact-elapsed').textContent).toBe('3.0 s');
    expect(
      one(el, '.mtj-compact-bar').classList.contains('mtj-compact-activity')
    ).toBe(true);
    expect(barWidth(state({ progress: [1, 4] }))).toBe(25);
    expect(barWidth(state({ done: true }))).toBeUndefined();
  });

  it('reads a failure as one, and cancels by message', async () => {
    const { el, model } = mount(compact, state({ status: 'input_required' }));
    expect(one(el, '.mtj-badge').textContent).toBe('needs input');
    one<HTMLButtonElement>(el, '.mtj-compact-cancel').click();
    expect(model.sent).toEqual([{ type: 'cancel' }]);
    model.update({
      status: 'completed',
      failed: true,
      done: true,
      finished: NOW,
      message: 'disk full'
    });
    await settle();
    expect(
      one(el, '.mtj-compact').classList.contains('mtj-compact-failed')
    ).toBe(true);
    expect(one(el, '.mtj-compact-cancel').hidden).toBe(true);
    expect(one(el, '.mtj-compact-bar').hidden).toBe(true);
  });
});
