import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import batch, {
  type IBatchState,
  eta,
  orderedCounts
} from '../src/widgets/batch';
import { mount, one, settle, texts } from './fake-model';

const NOW = 1_700_000_000; // epoch seconds on the test's clock

function state(patch: Partial<IBatchState> = {}): IBatchState {
  return {
    tool: 'research',
    server: 'demo',
    total: 10,
    limit: 3,
    counts: { queued: 7, working: 3 },
    ended: 0,
    fraction: 0,
    started: NOW - 4,
    finished: null,
    done: false,
    failed: [],
    slowest: [],
    cancelling: false,
    cancel_error: '',
    resumed: '',
    sent_at: NOW,
    ...patch
  };
}

const HOSTILE = '<img src=x onerror=alert(1)><b>bold</b>';

describe('batch widget', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW * 1000);
  });
  afterEach(() => {
    vi.useRealTimers();
    document.body.replaceChildren();
  });

  it('draws one view for the batch: counts in order, one bar, the clock', () => {
    const { el } = mount(
      batch,
      state({
        counts: { working: 3, completed: 2, queued: 5 },
        ended: 2,
        fraction: 0.25
      })
    );
    expect(el.querySelectorAll('.mtj-batch')).toHaveLength(1);
    expect(one(el, '.mtj-tool').textContent).toBe('research');
    expect(one(el, '.mtj-batch-size').textContent).toBe(
      ' · 10 tasks, at most 3 at once'
    );
    expect(texts(el, '.mtj-batch-counts .mtj-badge')).toEqual([
      '5 queued',
      '3 working',
      '2 completed'
    ]);
    expect(one(el, '.mtj-batch-counts .mtj-badge').className).toBe(
      'mtj-badge mtj-s-queued'
    );
    expect(el.querySelectorAll('.mtj-bar')).toHaveLength(1);
    expect(one(el, '.mtj-fill').style.width).toBe('25%');
    expect(one(el, '.mtj-progress-text').textContent).toBe('2/10 ended (25%)');
    // 4 s for a quarter: about 12 s left
    expect(one(el, '.mtj-elapsed').textContent).toBe('running for 4.0 s');
    expect(one(el, '.mtj-eta').textContent).toBe(' · about 12.0 s left');
    expect(one(el, '.mtj-batch-failed').hidden).toBe(true);
    expect(one(el, '.mtj-batch-slowest').hidden).toBe(true);
  });

  it('says how a resumed sweep came back, as text; nothing for a batch not resumed', () => {
    const line = `resumed sweep abc: 3 ended before, 1 re-attached, 6 sent fresh ${HOSTILE}`;
    const { el } = mount(batch, state({ resumed: line }));
    const resumed = one(el, '.mtj-batch-resumed');
    expect(resumed.textContent).toBe(line);
    expect(resumed.hidden).toBe(false);
    expect(resumed.querySelector('img')).toBeNull();
    const plain = mount(batch, state()).el;
    expect(one(plain, '.mtj-batch-resumed').hidden).toBe(true);
  });

  it('ticks the elapsed time and the ETA in the browser', () => {
    const { el } = mount(batch, state({ fraction: 0.5 }));
    expect(one(el, '.mtj-eta').textContent).toBe(' · about 4.0 s left');
    vi.advanceTimersByTime(2000);
    expect(one(el, '.mtj-elapsed').textContent).toBe('running for 6.0 s');
    expect(one(el, '.mtj-eta').textContent).toBe(' · about 6.0 s left');
  });

  it('lists the failed and the slowest tasks, as text', async () => {
    const { el, model } = mount(batch, state());
    model.update({
      counts: { completed: 8, failed: 2 },
      failed: [
        {
          index: 3,
          label: HOSTILE,
          status: 'failed',
          started: NOW - 3,
          finished: NOW - 1,
          error: HOSTILE
        },
        {
          index: 7,
          label: 'topic=b',
          status: 'failed',
          started: NOW - 3,
          finished: NOW - 2,
          error: 'boom'
        }
      ],
      slowest: [
        {
          index: 1,
          label: 'topic=slow',
          status: 'working',
          started: NOW - 9,
          finished: null,
          error: null
        },
        {
          index: 0,
          label: 'topic=a',
          status: 'completed',
          started: NOW - 4,
          finished: NOW - 1,
          error: null
        }
      ]
    });
    await settle();
    const failed = one(el, '.mtj-batch-failed');
    expect(failed.hidden).toBe(false);
    expect(one(failed, 'summary').textContent).toBe('2 failed');
    expect(texts(failed, '.mtj-batch-label')).toEqual([HOSTILE, 'topic=b']);
    expect(texts(failed, '.mtj-error-text')).toEqual([HOSTILE, 'boom']);
    expect(el.querySelector('img')).toBeNull();
    expect(el.querySelector('b')).toBeNull();
    const slowest = one(el, '.mtj-batch-slowest');
    expect(one(slowest, 'summary').textContent).toBe('slowest 2');
    expect(texts(slowest, '.mtj-batch-duration')).toEqual(['9.0 s', '3.0 s']);
    vi.advanceTimersByTime(1000);
    expect(texts(slowest, '.mtj-batch-duration')).toEqual(['10.0 s', '3.0 s']);
  });

  it('says how many failed when more failed than are listed', async () => {
    const { el, model } = mount(batch, state());
    model.update({
      counts: { failed: 25 },
      failed: [
        {
          index: 0,
          label: 'x',
          status: 'failed',
          started: NOW,
          finished: NOW,
          error: 'e'
        }
      ]
    });
    await settle();
    expect(one(el, '.mtj-batch-failed summary').textContent).toBe(
      '25 failed, first 1 shown'
    );
  });

  it('Cancel all sends one message and waits for the kernel', async () => {
    const { el, model } = mount(batch, state());
    const cancel = one<HTMLButtonElement>(el, '.mtj-cancel');
    expect(cancel.textContent).toBe('Cancel all');
    cancel.click();
    expect(model.sent).toEqual([{ type: 'cancel' }]);
    expect(cancel.disabled).toBe(true);
    model.set('cancelling', true);
    await settle();
    expect(cancel.textContent).toBe('Cancelling…');
    model.update({ cancelling: false, cancel_error: 'cancel failed: gone' });
    await settle();
    expect(one(el, '.mtj-cancel-error').textContent).toBe(
      'cancel failed: gone'
    );
  });

  it('stops the clock and hides Cancel all once every task ended', async () => {
    const { el, model } = mount(batch, state());
    model.update({
      done: true,
      finished: NOW + 1,
      ended: 10,
      fraction: 1,
      counts: { completed: 10 }
    });
    await settle();
    expect(one(el, '.mtj-elapsed').textContent).toBe('took 5.0 s');
    expect(one(el, '.mtj-eta').textContent).toBe('');
    expect(one(el, '.mtj-cancel').hidden).toBe(true);
    vi.advanceTimersByTime(3000);
    expect(one(el, '.mtj-elapsed').textContent).toBe('took 5.0 s');
  });

  it('cleans up its listeners', () => {
    const { model, cleanup } = mount(batch, state());
    expect(model.listenerCount).toBeGreaterThan(0);
    cleanup();
    expect(model.listenerCount).toBe(0);
  });
});

describe('batch helpers', () => {
  it('estimates what is left only when something is known', () => {
    expect(eta(0, 10)).toBeNull();
    expect(eta(1, 10)).toBeNull();
    expect(eta(0.25, 10)).toBe(30);
  });

  it('orders the counts by the vocabulary and drops zeros', () => {
    expect(
      orderedCounts({ odd: 1, completed: 2, queued: 0, working: 1 })
    ).toEqual([
      ['working', 1],
      ['completed', 2],
      ['odd', 1]
    ]);
  });
});
