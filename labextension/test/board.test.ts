import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import board from '../src/widgets/board';
import {
  applyRows,
  arrange,
  type BoardRow,
  clockText,
  elapsedText,
  type IBoardState,
  type IBoardView,
  type IRowsMessage,
  matches,
  PAGE,
  type RowChange
} from '../src/widgets/boardrows';
import { OVERSCAN } from '../src/widgets/boardtable';
import { mount, one, settle, texts } from './fake-model';
import { layout } from './layout';

const NOW = 1_700_000_000;

function row(key: number, patch: Partial<BoardRow> = {}): BoardRow {
  return {
    key,
    tool: `tool${key}`,
    server: 'demo',
    status: 'working',
    message: '',
    progress: null,
    total: null,
    started: NOW - 10,
    finished: null,
    task_id: `task-${key}`,
    live: true,
    ...patch
  };
}

function state(
  rows: BoardRow[],
  patch: Partial<IBoardState> = {}
): IBoardState {
  return {
    rows,
    filter_server: null,
    filter_status: null,
    total: rows.length,
    error: '',
    note: '',
    select_server: null,
    select_status: null,
    sent_at: NOW,
    show_history: false,
    ...patch
  };
}

const VIEW: IBoardView = {
  search: '',
  status: '',
  server: '',
  sort: null,
  descending: false,
  page: 0
};

function input(
  node: HTMLInputElement | HTMLSelectElement,
  value: string
): void {
  node.value = value;
  node.dispatchEvent(
    new Event(node instanceof HTMLSelectElement ? 'change' : 'input')
  );
}

describe('board logic', () => {
  const rows = [
    row(1, {
      tool: 'beta',
      server: 'b',
      status: 'completed',
      started: NOW - 5
    }),
    row(2, {
      tool: 'Alpha',
      server: 'a',
      message: 'Halfway there',
      started: NOW - 50
    }),
    row(3, {
      tool: 'gamma',
      server: 'a',
      status: 'failed',
      started: null,
      task_id: 'XYZ'
    })
  ];

  it('filters by status and server and searches five columns, ignoring case', () => {
    const keys = (view: Partial<IBoardView>): number[] =>
      rows.filter(r => matches(r, { ...VIEW, ...view })).map(r => r.key);
    expect(keys({ status: 'working' })).toEqual([2]);
    expect(keys({ server: 'a' })).toEqual([2, 3]);
    expect(keys({ search: 'halfway' })).toEqual([2]);
    expect(keys({ search: 'xyz' })).toEqual([3]);
    expect(keys({ search: 'alpha', server: 'b' })).toEqual([]);
  });

  it('sorts stably, by name ignoring case or by creation time (unknown first)', () => {
    const keys = (view: Partial<IBoardView>): number[] =>
      arrange(rows, { ...VIEW, ...view }).map(r => r.key);
    expect(keys({})).toEqual([1, 2, 3]);
    expect(keys({ sort: 'tool' })).toEqual([2, 1, 3]);
    expect(keys({ sort: 'tool', descending: true })).toEqual([3, 1, 2]);
    expect(keys({ sort: 'server' })).toEqual([2, 3, 1]);
    expect(keys({ sort: 'elapsed' })).toEqual([3, 2, 1]);
    expect(keys({ sort: 'status' })).toEqual([1, 3, 2]);
  });

  it('ticks live rows only', () => {
    expect(elapsedText(row(1), NOW)).toBe('10.0 s');
    expect(elapsedText(row(1, { finished: NOW - 4 }), NOW)).toBe('6.0 s');
    expect(elapsedText(row(1, { live: false }), NOW)).toBe('');
    expect(elapsedText(row(1, { live: false, finished: NOW }), NOW + 99)).toBe(
      '10.0 s'
    );
    expect(elapsedText(row(1, { started: null }), NOW)).toBe('');
  });
});

describe('board widget', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW * 1000);
  });
  afterEach(() => {
    vi.useRealTimers();
    document.body.replaceChildren();
  });

  it('draws one row per task with its cells', () => {
    const rows = [
      row(1, {
        status: 'input_required',
        message: 'waiting for input: depth?',
        progress: 3,
        total: 4
      }),
      row(-1, {
        tool: '?',
        status: 'completed',
        live: false,
        finished: NOW - 1,
        progress: null
      })
    ];
    const { el } = mount(
      board,
      state(rows, {
        total: 5,
        note: 'tasks/list of x failed',
        show_history: true
      })
    );
    const trs = el.querySelectorAll('tbody tr');
    expect(trs).toHaveLength(2);
    expect(texts(trs[0], 'td').slice(1, 5)).toEqual([
      'tool1',
      'demo',
      'needs input',
      'waiting for input: depth?'
    ]);
    expect(one(trs[0], '.mtj-board-task').title).toBe(
      'tool1\non demo\ntask task-1'
    );
    expect(one(trs[0], '.mtj-badge').className).toBe(
      'mtj-badge mtj-s-input_required'
    );
    expect(one(trs[0], '.mtj-fill').style.width).toBe('75%');
    expect(one(trs[0], '.mtj-progress-text').textContent).toBe('75%');
    expect(one(trs[0], '.mtj-board-elapsed').textContent).toBe('10.0 s');
    expect(one(trs[0], '.mtj-cancel').hidden).toBe(false);
    expect(trs[1].classList.contains('mtj-board-static')).toBe(true);
    expect(one(trs[1], '.mtj-cancel').hidden).toBe(true);
    expect(one(trs[1], '.mtj-bar').hidden).toBe(true);
    expect(one(el, '.mtj-board-caption').textContent).toBe(
      '2 shown: 1 task of this kernel, 1 from the history'
    );
    expect(one(el, '.mtj-board-note').textContent).toBe(
      'tasks/list of x failed'
    );
    expect(one(el, '.mtj-board-pager').hidden).toBe(true);
  });

  it("offers the statuses and servers seen, and starts from the kernel's selection", () => {
    const rows = [
      row(1, { server: 'b' }),
      row(2, { server: 'a', status: 'failed' })
    ];
    const { el } = mount(
      board,
      state(rows, { select_status: 'failed', select_server: 'gone' })
    );
    const [status, server] = el.querySelectorAll('select');
    expect(texts(status, 'option')).toEqual([
      'all statuses',
      'failed',
      'working'
    ]);
    expect(status.value).toBe('failed');
    expect(texts(server, 'option')).toEqual(['all servers', 'a', 'b', 'gone']);
    expect(one(el, '.mtj-board-caption').textContent).toBe(
      '0 shown: 2 tasks of this kernel'
    );
    input(server, '');
    expect(texts(el, 'tbody .mtj-tool')).toEqual(['tool2']);
  });

  it('searches, sorts by a header and pages through the rows it has', () => {
    const rows = Array.from({ length: 120 }, (_, i) =>
      row(i + 1, {
        tool: `t${String(i + 1).padStart(3, '0')}`,
        message: i % 2 ? 'odd' : 'even'
      })
    );
    const { el, model } = mount(board, state(rows, { filter_server: 'demo' }));
    const range = one(el, '.mtj-board-range');
    const [prev, next] =
      el.querySelectorAll<HTMLButtonElement>('.mtj-board-page');
    expect(el.querySelectorAll('tbody tr')).toHaveLength(PAGE);
    expect(range.textContent).toBe(' rows 1–50 of 120 ');
    expect(prev.disabled).toBe(true);
    next.click();
    next.click();
    expect(range.textContent).toBe(' rows 101–120 of 120 ');
    expect(next.disabled).toBe(true);
    expect(el.querySelectorAll('tbody tr')).toHaveLength(20);

    input(one<HTMLInputElement>(el, '.mtj-board-search'), '  ODD ');
    expect(range.textContent).toBe(' rows 1–50 of 60 ');
    expect(one(el, '.mtj-board-caption').textContent).toBe(
      '60 shown: 120 tasks of this kernel (server demo)'
    );

    const tool = el.querySelectorAll<HTMLElement>('th')[1];
    tool.click();
    tool.click();
    expect(tool.textContent).toBe('task ▼');
    expect(tool.getAttribute('aria-sort')).toBe('descending');
    expect(texts(el, 'tbody .mtj-tool').slice(0, 2)).toEqual(['t120', 't118']);
    expect(model.sent).toEqual([]); // all of it without the kernel
  });

  it("keeps a row's element across updates and touches only what changed", async () => {
    const { el, model } = mount(board, state([row(1), row(2)]));
    const first = el.querySelector('tbody tr');
    model.set('rows', [
      row(1, { status: 'completed', finished: NOW, message: 'done' }),
      row(2)
    ]);
    await settle();
    expect(one(first!, '.mtj-badge').textContent).toBe('working'); // drawn at the next frame
    vi.advanceTimersToNextFrame();
    expect(el.querySelector('tbody tr')).toBe(first);
    expect(one(first!, '.mtj-badge').textContent).toBe('completed');
    expect(one(first!, '.mtj-cancel').hidden).toBe(true);
    model.set('rows', [row(2)]);
    await settle();
    vi.advanceTimersToNextFrame();
    expect(el.querySelectorAll('tbody tr')).toHaveLength(1);
    expect(first!.isConnected).toBe(false);
  });

  it("draws the rows the kernel sent alone, into the model's rows (for later views and the saved state)", async () => {
    const rows = [row(1), row(2), row(3)];
    const { el, model } = mount(board, state(rows));
    board.initialize!({ model });
    const second = el.querySelectorAll('tbody tr')[1];
    const changed = {
      key: 2,
      status: 'completed',
      finished: NOW,
      message: 'done'
    };
    model.receive({ type: 'rows', rows: [changed], sent_at: NOW + 60 });
    vi.advanceTimersToNextFrame();
    expect(texts(el, '.mtj-badge')).toEqual([
      'working',
      'completed',
      'working'
    ]);
    expect(el.querySelectorAll('tbody tr')[1]).toBe(second);
    expect(model.get('rows')).toBe(rows);
    expect(rows[1]).toEqual({ ...row(2), ...changed });
    expect(model.saves).toBe(0);
    // the kernel's clock is learnt from the message: a minute ahead, the elapsed times say so
    vi.advanceTimersByTime(1000);
    expect(texts(el, '.mtj-board-elapsed')[0]).toBe('1 min 11 s');
    // a view opened afterwards starts from them; other messages and unknown keys change nothing
    model.receive({
      type: 'rows',
      rows: [row(9, { status: 'failed' })],
      sent_at: NOW
    });
    model.receive({ type: 'other', rows: [row(1, { status: 'failed' })] });
    const later = mount(board, model.state);
    expect(texts(later.el, '.mtj-badge')).toEqual([
      'working',
      'completed',
      'working'
    ]);
  });

  it('puts the same rows message in once, and ignores keys it does not hold', () => {
    const rows = [row(1), row(2)];
    const message = (changes: RowChange[]): IRowsMessage => ({
      type: 'rows',
      rows: changes,
      sent_at: NOW
    });
    const done = message([{ key: 1, status: 'completed' }]);
    const first = rows[0];
    expect(applyRows(rows, done)).toBe(true);
    expect(rows[0]).not.toBe(first); // a new object: the views redraw the row
    const drawn = rows[0];
    expect(applyRows(rows, done)).toBe(false);
    expect(rows[0]).toBe(drawn);
    expect(applyRows(rows, message([{ key: 5, status: 'failed' }]))).toBe(
      false
    );
    expect(applyRows(undefined, done)).toBe(false);
    expect(rows.map(r => [r.status, r.tool])).toEqual([
      ['completed', 'tool1'],
      ['working', 'tool2']
    ]);
  });

  it('sends Cancel for one row, by its key', () => {
    const { el, model } = mount(board, state([row(7)]));
    const cancel = one<HTMLButtonElement>(el, '.mtj-cancel');
    cancel.click();
    expect(model.sent).toEqual([{ type: 'cancel', key: 7 }]);
    expect(cancel.disabled).toBe(true);
  });

  it('reuses the elements of the rows that leave the page, Cancel following the task shown', () => {
    const rows = Array.from({ length: 120 }, (_, i) => row(i + 1));
    const { el, model } = mount(board, state(rows));
    const [prev, next] =
      el.querySelectorAll<HTMLButtonElement>('.mtj-board-page');
    const before = new Set(el.querySelectorAll('tbody tr'));
    next.click();
    const after = [...el.querySelectorAll('tbody tr')];
    expect(after).toHaveLength(PAGE);
    expect(after.every(tr => before.has(tr))).toBe(true);
    expect(texts(el, 'tbody .mtj-tool')[0]).toBe('tool51');
    one<HTMLButtonElement>(after[0], '.mtj-cancel').click();
    expect(model.sent).toEqual([{ type: 'cancel', key: 51 }]);
    prev.click();
    expect(texts(el, 'tbody .mtj-tool')[0]).toBe('tool1');
    expect(one<HTMLButtonElement>(el, 'tbody .mtj-cancel').disabled).toBe(
      false
    );
    next.click();
    expect(one<HTMLButtonElement>(el, 'tbody .mtj-cancel').disabled).toBe(true);
    one<HTMLButtonElement>(el, 'tbody tr:nth-child(2) .mtj-cancel').click();
    expect(model.sent[1]).toEqual({ type: 'cancel', key: 52 });
  });

  it('draws only the rows of the page in its scroll box, and the others as it scrolls', () => {
    const ROW = 30;
    layout.rows('tbody tr, thead', node => (node.matches('thead') ? 25 : ROW));
    try {
      const rows = Array.from({ length: 120 }, (_, i) => row(i + 1));
      const { el } = mount(board, state(rows));
      const wrap = one(el, '.mtj-board-wrap');
      const table = one(el, '.mtj-board-table');
      expect(el.querySelectorAll('tbody tr')).toHaveLength(PAGE); // not laid out yet: all of it
      layout.view(wrap, 10 * ROW);
      wrap.dispatchEvent(new Event('scroll'));
      vi.advanceTimersToNextFrame(); // measures the rows and draws what is in view
      const inView = 10 + OVERSCAN; // the overscan below (none above the first)
      expect(el.querySelectorAll('tbody tr')).toHaveLength(inView);
      expect(texts(el, 'tbody .mtj-tool')[0]).toBe('tool1');
      expect(table.style.marginBottom).toBe(`${(PAGE - inView) * ROW}px`);
      expect(one(el, '.mtj-board-range').textContent).toBe(
        ' rows 1–50 of 120 '
      );

      wrap.scrollTop = 40 * ROW + 25; // row 41 at the top of the box
      wrap.dispatchEvent(new Event('scroll'));
      vi.advanceTimersToNextFrame();
      const tools = texts(el, 'tbody .mtj-tool');
      expect(tools[tools.length - 1]).toBe('tool50');
      expect(tools).toContain('tool41');
      expect(tools).not.toContain('tool1');
      expect(tools.length).toBeLessThan(PAGE);
      const above = 50 - tools.length;
      expect(table.style.marginTop).toBe(`${above * ROW}px`);
      expect(table.style.marginBottom).toBe('');
    } finally {
      layout.reset();
    }
  });

  it('ticks live rows once a second, static and finished ones never', () => {
    const rows = [
      row(1),
      row(2, { finished: NOW - 2 }),
      row(-1, { live: false })
    ];
    const { el } = mount(board, state(rows, { show_history: true }));
    vi.advanceTimersByTime(2000);
    expect(texts(el, '.mtj-board-elapsed')).toEqual(['12.0 s', '8.0 s', '']);
  });

  it('hides the history behind a toggle that says how much there is', () => {
    const rows = [
      row(1),
      row(-1, { live: false, tool: 'old', origin: 'earlier kernel' }),
      row(-2, { live: false, tool: 'other', origin: 'other.ipynb' })
    ];
    const { el } = mount(board, state(rows));
    expect(texts(el, 'tbody .mtj-tool')).toEqual(['tool1']);
    const toggle = one(el, '.mtj-board-history-toggle');
    expect(toggle.hidden).toBe(false);
    expect(toggle.textContent).toBe('history (2 earlier)');
    const box = one<HTMLInputElement>(toggle, 'input');
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    expect(texts(el, 'tbody .mtj-tool')).toEqual(['tool1', 'old', 'other']);
    expect(texts(el, 'tbody .mtj-board-origin')).toEqual([
      '',
      'earlier kernel',
      'other.ipynb'
    ]);
    // The mark leads its cell, where the ellipsis of a long name never cuts it.
    const cell = el.querySelectorAll('tbody .mtj-board-task')[1];
    expect(cell.firstElementChild?.className).toBe('mtj-board-origin');
    expect(one(el, '.mtj-board-caption').textContent).toBe(
      '3 shown: 1 task of this kernel, 2 from the history'
    );
  });

  it('names each task by its arguments and shows when it started', () => {
    const started = new Date(2026, 0, 2, 9, 5, 7).getTime() / 1000;
    const { el } = mount(
      board,
      state([row(1, { args: 'topic=tides depth=2', started })])
    );
    expect(one(el, 'tbody .mtj-board-args').textContent).toBe(
      ' topic=tides depth=2'
    );
    expect(one(el, 'tbody .mtj-board-started').textContent).toBe('09:05:07');
    expect(clockText(null)).toBe('');
  });

  it('cancels the ticked rows together, or every running task', () => {
    const rows = [
      row(1),
      row(2),
      row(3, { finished: NOW, status: 'completed' }),
      row(4)
    ];
    const { el, model } = mount(board, state(rows));
    const picks = el.querySelectorAll<HTMLInputElement>(
      'tbody .mtj-board-pick input'
    );
    expect([...picks].map(p => p.hidden)).toEqual([false, false, true, false]);
    const selected = one<HTMLButtonElement>(el, '.mtj-board-cancel-picked');
    const running = one<HTMLButtonElement>(el, '.mtj-board-cancel-running');
    expect(selected.disabled).toBe(true);
    expect(running.textContent).toBe('Cancel all running (3)');
    picks[0].checked = true;
    picks[0].dispatchEvent(new Event('change'));
    picks[3].checked = true;
    picks[3].dispatchEvent(new Event('change'));
    expect(selected.textContent).toBe('Cancel selected (2)');
    selected.click();
    expect(model.sent).toEqual([{ type: 'cancel', keys: [1, 4] }]);
    expect(selected.textContent).toBe('Cancel selected (0)');
    const all = one<HTMLInputElement>(el, '.mtj-board-pick-all');
    all.checked = true;
    all.dispatchEvent(new Event('change'));
    expect(selected.textContent).toBe('Cancel selected (3)');
    running.click();
    expect(model.sent[1]).toEqual({ type: 'cancel_running' });
    expect(running.disabled).toBe(true);
  });

  it('shows text only, whatever the server sent', () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const { el } = mount(
      board,
      state([row(1, { tool: hostile, message: hostile, status: hostile })], {
        error: hostile
      })
    );
    expect(el.querySelector('tbody img')).toBeNull();
    expect(one(el, '.mtj-badge').className).toBe(
      'mtj-badge mtj-s-imgsrcxonerroralert'
    );
    expect(one(el, '.mtj-error-text').textContent).toBe(hostile);
  });

  it('cleans up its listeners and its clock', () => {
    const { model, cleanup } = mount(board, state([row(1)]));
    const stop = board.initialize!({ model });
    cleanup();
    stop?.();
    expect(model.listenerCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
