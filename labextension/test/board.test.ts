import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import board, {
  arrange,
  type BoardRow,
  elapsedText,
  type IBoardState,
  type IBoardView,
  matches,
  PAGE
} from '../src/widgets/board';
import { mount, one, settle, texts } from './fake-model';

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
      state(rows, { total: 5, note: 'tasks/list of x failed' })
    );
    const trs = el.querySelectorAll('tbody tr');
    expect(trs).toHaveLength(2);
    expect(texts(trs[0], 'td').slice(0, 4)).toEqual([
      'tool1',
      'demo',
      'input_required',
      'waiting for input: depth?'
    ]);
    expect(one(trs[0], '.mtj-tool').title).toBe('task task-1');
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
      '2 shown, 2 of 5 tasks'
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
      '0 shown, 2 of 2 tasks'
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
      '60 shown, 120 of 120 tasks (server demo)'
    );

    const tool = el.querySelectorAll<HTMLElement>('th')[0];
    tool.click();
    tool.click();
    expect(tool.textContent).toBe('tool ▼');
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
    expect(el.querySelector('tbody tr')).toBe(first);
    expect(one(first!, '.mtj-badge').textContent).toBe('completed');
    expect(one(first!, '.mtj-cancel').hidden).toBe(true);
    model.set('rows', [row(2)]);
    await settle();
    expect(el.querySelectorAll('tbody tr')).toHaveLength(1);
    expect(first!.isConnected).toBe(false);
  });

  it('sends Cancel for one row, by its key', () => {
    const { el, model } = mount(board, state([row(7)]));
    const cancel = one<HTMLButtonElement>(el, '.mtj-cancel');
    cancel.click();
    expect(model.sent).toEqual([{ type: 'cancel', key: 7 }]);
    expect(cancel.disabled).toBe(true);
  });

  it('ticks live rows once a second, static and finished ones never', () => {
    const rows = [
      row(1),
      row(2, { finished: NOW - 2 }),
      row(-1, { live: false })
    ];
    const { el } = mount(board, state(rows));
    vi.advanceTimersByTime(2000);
    expect(texts(el, '.mtj-board-elapsed')).toEqual(['12.0 s', '8.0 s', '']);
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
    cleanup();
    expect(model.listenerCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
