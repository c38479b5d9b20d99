import { afterEach, describe, expect, it } from 'vitest';

import board from '../src/widgets/board';
import type { IBoardState } from '../src/widgets/boardrows';
import {
  countsText,
  type ISweepEntry,
  type ISweepPage,
  pageText
} from '../src/widgets/boardsweeps';
import { mount, one, settle, texts } from './fake-model';

const SWEEP: ISweepEntry = {
  id: 'abc123def456',
  tool: 'slow_compute',
  server: 'demo',
  total: 100000,
  counts: { queued: 60000, ended: 39900, going: 100 },
  sent_again: 3,
  finished: false
};

function page(offset: number, n: number): ISweepPage {
  return {
    ...SWEEP,
    offset,
    size: 100,
    items: Array.from({ length: n }, (_, i) => ({
      position: offset + i,
      label: `label=<b>i${offset + i}</b>`,
      state: 'ended',
      status: 'completed',
      task_id: `t${offset + i}`,
      note: i === 0 ? 'sent again: the server lost it' : null
    }))
  };
}

function state(patch: Partial<IBoardState> = {}): IBoardState {
  return {
    rows: [],
    filter_server: null,
    filter_status: null,
    total: 0,
    error: '',
    note: '',
    select_server: null,
    select_status: null,
    sent_at: 0,
    show_history: false,
    ...patch
  };
}

let cleanup = (): void => undefined;
afterEach(() => cleanup());

describe('the board shows sweeps', () => {
  it('counts a sweep by state, in the order items go through them', () => {
    expect(countsText(SWEEP)).toBe(
      '100,000 items: 39,900 ended, 100 going, 60,000 queued (3 sent again), unfinished'
    );
    expect(pageText(page(100, 100))).toBe('items 101–200 of 100,000');
  });

  it('lists the sweeps and asks the kernel for one page of items at a time', async () => {
    const mounted = mount(board, state({ sweeps: [SWEEP], sweep_page: {} }));
    cleanup = mounted.cleanup;
    const { model, el } = mounted;
    await settle();
    expect(texts(el, '.mtj-board-sweep')[0]).toContain('slow_compute on demo');
    one<HTMLButtonElement>(el, '.mtj-board-sweep button').click();
    expect(model.sent).toContainEqual({
      type: 'sweep',
      id: SWEEP.id,
      offset: 0
    });
    model.set('sweep_page', page(100, 100));
    await new Promise(resolve => requestAnimationFrame(resolve));
    await settle();
    const rows = el.querySelectorAll('.mtj-board-sweep-items tbody tr');
    expect(rows.length).toBe(100); // one page, never the sweep's 100,000 items
    expect(rows[0].textContent).toContain('label=<b>i100</b>'); // text, not markup
    expect(el.querySelector('.mtj-board-sweep-items b')).toBeNull();
    const buttons = [
      ...el.querySelectorAll<HTMLButtonElement>('.mtj-board-sweep-head button')
    ];
    buttons.find(b => b.textContent?.startsWith('Next'))?.click();
    buttons.find(b => b.textContent?.includes('Previous'))?.click();
    buttons.find(b => b.textContent === 'Close')?.click();
    expect(model.sent.slice(-3)).toEqual([
      { type: 'sweep', id: SWEEP.id, offset: 200 },
      { type: 'sweep', id: SWEEP.id, offset: 0 },
      { type: 'sweep', id: null, offset: 0 }
    ]);
  });
});
