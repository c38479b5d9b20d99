/**
 * BoardWidget front end (`board_widget.py`): one table, text set with
 * `textContent` only. Search, the status and server filters, the history
 * toggle, sorting and paging all happen here, on the rows already sent (no
 * round trip to the kernel). Of the current page (PAGE rows), only the rows in
 * the table's scroll box and OVERSCAN beyond each edge are in the DOM; the
 * table's margins stand for the others, and elements of rows that leave the
 * view are reused for the rows that come in.
 * Elapsed times of live rows tick here once a second; history rows (live
 * false: earlier kernels, other notebooks, the server's list) never tick and
 * show only when the person turns "history" on. Rows can be ticked and
 * cancelled together, or every running task at once. The kernel's updates are
 * drawn at most once per animation frame (none while the page is hidden).
 * While the board's rows stay the same ones the kernel sends only the rows that
 * changed (a `rows` message, `board_widget.ROWS_MESSAGE`); they are put into the
 * model's rows in place, so that a view opened later, and the widget state a
 * saved notebook keeps, have them too, without being sent back to the kernel.
 */

import { formatDuration } from '../format';
import { inWords } from '../status';
import type { IRenderProps, IWidgetModule } from './anywidget';
import { button, h } from './dom';
import { follow, KernelClock, statusClass } from './live';

/** One row of the board, as the kernel sends it (`view.board_row`). */
export interface BoardRow {
  key: number;
  tool: string;
  server: string;
  status: string;
  message: string;
  progress: number | null;
  total: number | null;
  started: number | null;
  finished: number | null;
  task_id: string;
  /** Followed by a live handle: its elapsed time ticks and it can be cancelled. */
  live: boolean;
  /** The arguments in a few words (`topic=tides depth=2`). */
  args?: string;
  /** Where a history row comes from ("earlier kernel", a notebook, "the server's list"). */
  origin?: string;
}

/** Of a row that changed, its key and the fields that changed. */
export type RowChange = Partial<BoardRow> & { key: number };

/** The custom message with the rows that changed (`board_widget.ROWS_MESSAGE`). */
export interface IRowsMessage {
  type: 'rows';
  rows: RowChange[];
  /** The kernel's clock when it sent them. */
  sent_at: number;
}

export function isRowsMessage(content: unknown): content is IRowsMessage {
  const message = content as Partial<IRowsMessage> | null;
  return (
    typeof message === 'object' &&
    message !== null &&
    message.type === 'rows' &&
    Array.isArray(message.rows)
  );
}

/** Where each key is in a rows array the kernel sent (its keys never move while it is current). */
const positions = new WeakMap<BoardRow[], Map<number, number>>();
/** The rows message last put into each rows array (the model's and a view's listener both see it). */
const applied = new WeakMap<BoardRow[], IRowsMessage>();

/**
 * Put the changes of `message` into `rows` in place: each row that changed becomes a new object,
 * its fields laid over the old ones (a key not there is ignored: the kernel sends every row when
 * the set of rows changes). The same message twice changes nothing. Whether any row changed.
 */
export function applyRows(
  rows: BoardRow[] | undefined,
  message: IRowsMessage
): boolean {
  if (!Array.isArray(rows) || applied.get(rows) === message) {
    return false;
  }
  applied.set(rows, message);
  let at = positions.get(rows);
  if (!at) {
    at = new Map(rows.map((row, i) => [row.key, i]));
    positions.set(rows, at);
  }
  let changed = false;
  for (const change of message.rows) {
    const i = at.get(change?.key);
    if (i !== undefined) {
      rows[i] = { ...rows[i], ...change };
      changed = true;
    }
  }
  return changed;
}

/** The fields a search looks in. */
const SEARCHED = [
  'tool',
  'args',
  'server',
  'status',
  'message',
  'task_id',
  'origin'
] as const;

/** The traits of `BoardWidget`. */
export interface IBoardState {
  rows: BoardRow[];
  filter_server: string | null;
  filter_status: string | null;
  total: number;
  error: string;
  note: string;
  select_server: string | null;
  select_status: string | null;
  sent_at: number;
  show_history: boolean;
}

/** Rows on one page. */
export const PAGE = 50;

/** Rows drawn beyond each edge of the table's scroll box, so that a short scroll shows no gap. */
export const OVERSCAN = 8;

export type SortKey = 'tool' | 'server' | 'status' | 'started' | 'elapsed';

/** `[title, sort key or null]` of each column (the first holds the row's tick box). */
const COLUMNS: readonly (readonly [string, SortKey | null])[] = [
  ['', null],
  ['task', 'tool'],
  ['server', 'server'],
  ['status', 'status'],
  ['message', null],
  ['progress', null],
  ['started', 'started'],
  ['elapsed', 'elapsed'],
  ['', null]
];

/** The traits whose change redraws the board. */
const TRAITS = [
  'rows',
  'total',
  'error',
  'note',
  'filter_server',
  'filter_status'
] as const satisfies readonly (keyof IBoardState)[];

/** What the person chose to see. */
export interface IBoardView {
  /** Lower case, trimmed; "" for none. */
  search: string;
  status: string;
  server: string;
  sort: SortKey | null;
  descending: boolean;
  page: number;
  /** Show the history rows (live false) too. */
  history?: boolean;
}

/** A live row whose task still runs: it can be ticked and cancelled. */
export function cancellable(row: BoardRow): boolean {
  return row.live && row.finished === null;
}

/** Whether a row passes the view's filters and search (tool, arguments, server, status, message, task id). */
export function matches(row: BoardRow, view: IBoardView): boolean {
  if (!row.live && view.history === false) {
    return false;
  }
  if (view.status && row.status !== view.status) {
    return false;
  }
  if (view.server && row.server !== view.server) {
    return false;
  }
  if (!view.search) {
    return true;
  }
  for (const field of SEARCHED) {
    if (
      String(row[field] ?? '')
        .toLowerCase()
        .includes(view.search)
    ) {
      return true;
    }
  }
  return false;
}

function sortValue(row: BoardRow, sort: SortKey): string | number {
  switch (sort) {
    case 'tool':
      return String(row.tool).toLowerCase();
    case 'server':
      return String(row.server).toLowerCase();
    case 'status':
      return String(row.status);
    case 'started':
      return typeof row.started === 'number' ? row.started : -Infinity;
    default:
      // elapsed: by creation time
      return typeof row.started === 'number' ? row.started : -Infinity;
  }
}

/** The rows the view shows, in its order (a stable sort; the kernel's order when unsorted). */
export function arrange(
  rows: readonly BoardRow[],
  view: IBoardView
): BoardRow[] {
  const shown = rows.filter(row => matches(row, view));
  const sort = view.sort;
  if (!sort) {
    return shown;
  }
  const sign = view.descending ? -1 : 1;
  const keyed = shown.map((row, i) => [sortValue(row, sort), i, row] as const);
  keyed.sort((a, b) =>
    a[0] < b[0] ? -sign : a[0] > b[0] ? sign : a[1] - b[1]
  );
  return keyed.map(k => k[2]);
}

/** `14:03:07`: a start time (epoch s) on the browser's clock, "" when unknown. */
export function clockText(epoch: number | null): string {
  if (typeof epoch !== 'number') {
    return '';
  }
  const at = new Date(epoch * 1000);
  return [at.getHours(), at.getMinutes(), at.getSeconds()]
    .map(n => String(n).padStart(2, '0'))
    .join(':');
}

/** A row's elapsed time: ticking for a live task, fixed once it finished; "" when unknown. */
export function elapsedText(row: BoardRow, now: number): string {
  const started = row.started;
  const finished = row.finished;
  if (typeof started !== 'number') {
    return '';
  }
  if (row.live) {
    return formatDuration((finished === null ? now : finished) - started);
  }
  return typeof finished === 'number' ? formatDuration(finished - started) : '';
}

function option(select: HTMLSelectElement, value: string, label: string): void {
  const node = h('option', null, label);
  node.value = value;
  select.append(node);
}

interface ICells {
  tr: HTMLTableRowElement;
  pick: HTMLInputElement;
  tool: HTMLTableCellElement;
  toolName: HTMLSpanElement;
  args: HTMLSpanElement;
  origin: HTMLSpanElement;
  started: HTMLTableCellElement;
  server: HTMLTableCellElement;
  status: HTMLTableCellElement;
  message: HTMLTableCellElement;
  progress: HTMLTableCellElement;
  elapsed: HTMLTableCellElement;
  action: HTMLTableCellElement;
  badge: HTMLSpanElement;
  bar: HTMLDivElement;
  fill: HTMLDivElement;
  progressText: HTMLSpanElement;
  cancel: HTMLButtonElement;
}

/** A row on the page: its cells and the data they show (reused for another key when the page changes). */
interface IEntry {
  key: number;
  tr: HTMLTableRowElement;
  cells: ICells;
  row: BoardRow | null;
}

function render({ model, el }: IRenderProps<IBoardState>): () => void {
  const clock = new KernelClock(model);
  const view: IBoardView = {
    search: '',
    status: model.get('select_status') || '',
    server: model.get('select_server') || '',
    sort: null,
    descending: false,
    page: 0,
    history: Boolean(model.get('show_history'))
  };
  /** The keys of the ticked rows (running tasks only). */
  const picked = new Set<number>();
  /** The keys of the tasks whose cancellation was asked for here (their Cancel stays off). */
  const cancelAsked = new Set<number>();

  const root = h('div', 'mtj-board');
  const controls = h('div', 'mtj-board-controls');
  const search = h('input', 'mtj-board-search');
  search.type = 'search';
  search.placeholder = 'search tool, server, status, message, task id';
  search.setAttribute('aria-label', 'search tasks');
  const statusSelect = h('select', 'mtj-board-filter');
  statusSelect.setAttribute('aria-label', 'filter by status');
  const serverSelect = h('select', 'mtj-board-filter');
  serverSelect.setAttribute('aria-label', 'filter by server');
  const pager = h('span', 'mtj-board-pager');
  const prev = button('‹ prev', 'mtj-board-page');
  const next = button('next ›', 'mtj-board-page');
  const pageText = h('span', 'mtj-muted mtj-board-range');
  pager.append(prev, pageText, next);
  const historyLabel = h('label', 'mtj-board-history-toggle');
  const historyBox = h('input');
  historyBox.type = 'checkbox';
  historyBox.checked = Boolean(view.history);
  const historyText = h('span', null, 'history');
  historyLabel.append(historyBox, historyText);
  historyLabel.title =
    "also show tasks from earlier kernels, other notebooks and the server's own list";
  controls.append(search, statusSelect, serverSelect, historyLabel, pager);
  const actions = h('div', 'mtj-board-actions');
  const cancelPicked = button(
    'Cancel selected',
    'jp-mod-styled jp-mod-warn mtj-board-cancel-picked',
    'ask the server to cancel the ticked tasks'
  );
  const cancelRunning = button(
    'Cancel all running',
    'jp-mod-styled jp-mod-warn mtj-board-cancel-running',
    'ask the server to cancel every running task on this board'
  );
  actions.append(cancelPicked, cancelRunning);
  const caption = h('div', 'mtj-board-caption mtj-muted');
  const note = h('div', 'mtj-board-note mtj-muted');
  const error = h('div', 'mtj-error-text');
  const wrap = h('div', 'mtj-board-wrap');
  const table = h('table', 'mtj-board-table');
  const head = h('tr');
  const headers: [HTMLTableCellElement, string, SortKey | null][] = [];
  const pickAll = h('input', 'mtj-board-pick-all');
  pickAll.type = 'checkbox';
  pickAll.setAttribute('aria-label', 'select every running task shown');
  pickAll.addEventListener('change', () => {
    for (const row of arrange(model.get('rows') || [], view)) {
      if (cancellable(row)) {
        if (pickAll.checked) {
          picked.add(row.key);
        } else {
          picked.delete(row.key);
        }
      }
    }
    update();
  });
  COLUMNS.forEach(([title, sortKey], i) => {
    const th = h('th', sortKey ? 'mtj-board-sortable' : null, title);
    if (i === 0) {
      th.append(pickAll);
    }
    if (sortKey) {
      th.title = `sort by ${sortKey === 'elapsed' ? 'creation time' : sortKey}`;
      th.addEventListener('click', () => {
        if (view.sort === sortKey) {
          view.descending = !view.descending;
        } else {
          view.sort = sortKey;
          view.descending = false;
        }
        view.page = 0;
        update();
      });
    }
    headers.push([th, title, sortKey]);
    head.append(th);
  });
  const thead = h('thead');
  thead.append(head);
  const tbody = h('tbody');
  table.append(thead, tbody);
  wrap.append(table);
  root.append(controls, actions, caption, note, error, wrap);
  el.append(root);

  search.addEventListener('input', () => {
    view.search = search.value.trim().toLowerCase();
    view.page = 0;
    update();
  });
  statusSelect.addEventListener('change', () => {
    view.status = statusSelect.value;
    view.page = 0;
    update();
  });
  serverSelect.addEventListener('change', () => {
    view.server = serverSelect.value;
    view.page = 0;
    update();
  });
  prev.addEventListener('click', () => {
    view.page = Math.max(0, view.page - 1);
    update();
  });
  next.addEventListener('click', () => {
    view.page += 1;
    update();
  });
  historyBox.addEventListener('change', () => {
    view.history = historyBox.checked;
    view.page = 0;
    // The kernel keeps the choice: the table saved with the notebook holds the history rows only
    // when they were on screen (and marks them as history).
    model.set('show_history', view.history);
    model.save_changes();
    update();
  });
  cancelPicked.addEventListener('click', () => {
    const keys = [...picked];
    if (keys.length) {
      model.send({ type: 'cancel', keys });
      for (const key of keys) {
        cancelAsked.add(key);
        byKey.get(key)?.cells.cancel.setAttribute('disabled', '');
      }
      picked.clear();
      update();
    }
  });
  cancelRunning.addEventListener('click', () => {
    model.send({ type: 'cancel_running' });
    cancelRunning.disabled = true;
    picked.clear();
    for (const row of model.get('rows') || []) {
      if (cancellable(row)) {
        cancelAsked.add(row.key);
      }
    }
    for (const entry of byKey.values()) {
      entry.cells.cancel.disabled = true;
    }
  });

  /** The rows drawn (those of the page in the scroll box), by key. */
  const byKey = new Map<number, IEntry>();
  /** The rows of the current page, in order. */
  let pageRows: BoardRow[] = [];
  /** A drawn row's height, px (0 until measured: then every row of the page is drawn). */
  let rowHeight = 0;
  /** What each select offers, as "a\u0000b". */
  const optionSets = new Map<HTMLSelectElement, string>();

  function makeRow(): IEntry {
    const tr = h('tr');
    const pickCell = h('td', 'mtj-board-pick');
    const pick = h('input');
    pick.type = 'checkbox';
    pick.setAttribute('aria-label', 'select this task');
    pick.addEventListener('change', () => {
      if (pick.checked) {
        picked.add(entry.key);
      } else {
        picked.delete(entry.key);
      }
      update();
    });
    pickCell.append(pick);
    const tool = h('td', 'mtj-board-task');
    const toolName = h('span', 'mtj-tool');
    const args = h('span', 'mtj-board-args mtj-muted');
    const origin = h('span', 'mtj-board-origin');
    // The history mark first: the end of a long name is what the cell's ellipsis cuts.
    tool.append(origin, toolName, args);
    const status = h('td', 'mtj-board-status');
    const badge = h('span', 'mtj-badge');
    status.append(badge);
    const progress = h('td');
    const bar = h('div', 'mtj-bar mtj-board-bar');
    const fill = h('div', 'mtj-fill');
    bar.append(fill);
    const progressText = h('span', 'mtj-progress-text');
    progress.append(bar, progressText);
    const action = h('td');
    const cancel = button(
      'Cancel',
      'jp-mod-styled mtj-cancel',
      'ask the server to cancel this task'
    );
    cancel.addEventListener('click', () => {
      cancel.disabled = true;
      cancelAsked.add(entry.key);
      model.send({ type: 'cancel', key: entry.key });
    });
    action.append(cancel);
    const cells: ICells = {
      tr,
      pick,
      tool,
      toolName,
      args,
      origin,
      started: h('td', 'mtj-board-started'),
      server: h('td'),
      status,
      message: h('td', 'mtj-board-message'),
      progress,
      elapsed: h('td', 'mtj-board-elapsed'),
      action,
      badge,
      bar,
      fill,
      progressText,
      cancel
    };
    tr.append(
      pickCell,
      cells.tool,
      cells.server,
      cells.status,
      cells.message,
      cells.progress,
      cells.started,
      cells.elapsed,
      cells.action
    );
    const entry: IEntry = { key: -1, tr, cells, row: null };
    return entry;
  }

  function fillRow(entry: IEntry, row: BoardRow): void {
    const old: Partial<BoardRow> = entry.row || {};
    const c = entry.cells;
    const {
      tool,
      server,
      status,
      message,
      progress: value,
      total,
      finished,
      task_id: taskId,
      live,
      started
    } = row;
    const args = row.args || '';
    const origin = row.origin || '';
    if (old.tool !== tool) {
      c.toolName.textContent = tool;
    }
    if (old.args !== args) {
      c.args.textContent = args ? ` ${args}` : '';
    }
    if (old.origin !== origin) {
      c.origin.textContent = origin;
      c.origin.hidden = !origin;
    }
    if (
      old.tool !== tool ||
      old.args !== args ||
      old.task_id !== taskId ||
      old.origin !== origin ||
      old.server !== server
    ) {
      // The server too: a narrow board hides its column.
      c.tool.title = [
        args ? `${tool} ${args}` : tool,
        server ? `on ${server}` : '',
        taskId ? `task ${taskId}` : '',
        origin ? `from: ${origin}` : ''
      ]
        .filter(Boolean)
        .join('\n');
    }
    if (old.started !== started) {
      c.started.textContent = clockText(started);
    }
    if (old.server !== server) {
      c.server.textContent = server;
    }
    if (old.status !== status) {
      c.badge.textContent = inWords(status);
      c.badge.className = `mtj-badge ${statusClass(status)}`;
    }
    if (old.message !== message) {
      c.message.textContent = message;
      c.message.title = message;
    }
    if (
      old.progress !== value ||
      old.total !== total ||
      old.finished !== finished
    ) {
      const known =
        typeof total === 'number' && total > 0 && typeof value === 'number';
      c.bar.hidden = !known || finished !== null;
      if (known) {
        c.fill.style.width = `${(Math.min(1, Math.max(0, value / total)) * 100).toFixed(1)}%`;
      }
      c.progressText.textContent =
        value === null
          ? ''
          : known
            ? `${Math.round((value / total) * 100)}%`
            : `${value}`;
    }
    c.cancel.hidden = !live || finished !== null;
    c.cancel.disabled = !live || finished !== null || cancelAsked.has(row.key);
    c.tr.classList.toggle('mtj-board-static', !live);
    c.pick.hidden = !cancellable(row);
    entry.row = row;
    c.elapsed.textContent = elapsedText(row, clock.now());
  }

  function setOptions(
    select: HTMLSelectElement,
    values: string[],
    chosen: string,
    allLabel: string
  ): void {
    const wanted = [...new Set(chosen ? [...values, chosen] : values)].sort();
    const signature = wanted.join('\u0000');
    if (optionSets.get(select) !== signature) {
      optionSets.set(select, signature);
      select.replaceChildren();
      option(select, '', allLabel);
      for (const value of wanted) {
        option(select, value, value);
      }
    }
    select.value = chosen;
  }

  function update(): void {
    const rows = model.get('rows') || [];
    setOptions(
      statusSelect,
      rows.map(r => r.status),
      view.status,
      'all statuses'
    );
    setOptions(
      serverSelect,
      rows.map(r => r.server),
      view.server,
      'all servers'
    );
    const shown = arrange(rows, view);
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    view.page = Math.min(view.page, pages - 1);
    const first = view.page * PAGE;
    const page = shown.slice(first, first + PAGE);

    const byRowKey = new Map(rows.map(r => [r.key, r]));
    for (const keys of [picked, cancelAsked]) {
      for (const key of keys) {
        const row = byRowKey.get(key);
        if (!row || !cancellable(row)) {
          keys.delete(key);
        }
      }
    }
    pageRows = page;
    drawRows(true);

    for (const [th, title, sortKey] of headers) {
      if (!sortKey) {
        continue;
      }
      const on = view.sort === sortKey;
      th.textContent = on ? `${title} ${view.descending ? '▼' : '▲'}` : title;
      th.setAttribute(
        'aria-sort',
        on ? (view.descending ? 'descending' : 'ascending') : 'none'
      );
    }
    pageText.textContent = shown.length
      ? ` rows ${first + 1}–${first + page.length} of ${shown.length} `
      : ' no rows ';
    prev.disabled = view.page === 0;
    next.disabled = view.page >= pages - 1;
    pager.hidden = shown.length <= PAGE;

    const filters: string[] = [];
    if (model.get('filter_server')) {
      filters.push(`server ${model.get('filter_server')}`);
    }
    if (model.get('filter_status')) {
      filters.push(`status ${model.get('filter_status')}`);
    }
    const history = rows.filter(r => !r.live).length;
    const running = rows.filter(cancellable).length;
    const shownRunning = shown.filter(cancellable);
    historyText.textContent = `history (${history} earlier)`;
    historyLabel.hidden = history === 0;
    cancelPicked.textContent = `Cancel selected (${picked.size})`;
    cancelPicked.disabled = picked.size === 0;
    cancelRunning.textContent = `Cancel all running (${running})`;
    cancelRunning.disabled = running === 0;
    actions.hidden = running === 0 && picked.size === 0;
    pickAll.hidden = shownRunning.length === 0;
    pickAll.checked =
      shownRunning.length > 0 && shownRunning.every(r => picked.has(r.key));
    const live = rows.length - history;
    caption.textContent =
      `${shown.length} shown: ${live} task${live === 1 ? '' : 's'} of this kernel` +
      (view.history && history ? `, ${history} from the history` : '') +
      (filters.length ? ` (${filters.join(', ')})` : '');
    note.textContent = model.get('note');
    note.hidden = !model.get('note');
    error.textContent = model.get('error');
    error.hidden = !model.get('error');
  }

  /**
   * The rows of the page in the table's scroll box (and OVERSCAN beyond each edge), at their place;
   * `measure`: read their height again (not while scrolling, where it could feed back into the scroll).
   */
  function drawRows(measure = false): void {
    const page = pageRows;
    const [from, to] = inView(page.length);
    const drawn = page.slice(from, to);
    // The rows that leave the view lend their elements to the rows that come in.
    const wanted = new Set(drawn.map(row => row.key));
    const free: IEntry[] = [];
    for (const [key, entry] of byKey) {
      if (!wanted.has(key)) {
        byKey.delete(key);
        free.push(entry);
      }
    }
    drawn.forEach((row, i) => {
      const key = row.key;
      let entry = byKey.get(key);
      if (!entry) {
        entry = free.pop() ?? makeRow();
        entry.key = key;
        byKey.set(key, entry);
      }
      if (entry.row !== row) {
        fillRow(entry, row);
      }
      entry.cells.pick.checked = picked.has(key);
      if (tbody.children[i] !== entry.tr) {
        tbody.insertBefore(entry.tr, tbody.children[i] || null);
      }
    });
    for (const entry of free) {
      entry.tr.remove();
    }
    // The rows not drawn, as margins above and below the table: the scrollbar reads as the whole page.
    setPx(table, 'marginTop', from * rowHeight);
    setPx(table, 'marginBottom', (page.length - to) * rowHeight);
    if ((measure || rowHeight === 0) && drawn.length && wrap.clientHeight > 0) {
      // Measured once the table is laid out (then drawn again, to the view); later measures only
      // steer the next drawing, so that rows of unequal height never redraw each other in a loop.
      const first = rowHeight === 0;
      rowHeight = tbody.offsetHeight / drawn.length;
      if (first && rowHeight > 0) {
        scrolled.request();
      }
    }
  }

  /** `[from, to)`: the rows of a page of `count` in the scroll box; all of them until a row was measured. */
  function inView(count: number): [number, number] {
    const height = wrap.clientHeight;
    if (rowHeight <= 0 || height <= 0) {
      return [0, count];
    }
    const top = Math.max(0, wrap.scrollTop - thead.offsetHeight);
    const rows = Math.ceil(height / rowHeight);
    const from = Math.min(
      Math.max(0, Math.floor(top / rowHeight) - OVERSCAN),
      Math.max(0, count - rows - OVERSCAN)
    );
    return [from, Math.min(count, from + rows + 2 * OVERSCAN)];
  }

  function tick(): void {
    for (const entry of byKey.values()) {
      const row = entry.row;
      if (row && row.live && row.finished === null) {
        entry.cells.elapsed.textContent = elapsedText(row, clock.now());
      }
    }
  }

  // The first drawing now; the kernel's updates at the next animation frame.
  const frame = new FrameRequest(update);
  const scrolled = new FrameRequest(() => drawRows());
  wrap.addEventListener('scroll', scrolled.request, { passive: true });
  const onRows = (content: unknown): void => {
    if (isRowsMessage(content)) {
      // (`initialize` put them in already; once more in case a reloaded module's came later)
      applyRows(model.get('rows'), content);
      clock.learn(content.sent_at);
      frame.request();
    }
  };
  model.on('msg:custom', onRows);
  const stop = follow(model, TRAITS, frame.request, tick, clock);
  frame.flush();
  return () => {
    frame.cancel();
    scrolled.cancel();
    model.off('msg:custom', onRows);
    stop();
  };
}

/** Once per model: the rows that changed go into its rows even while no view is on screen. */
function initialize({
  model
}: {
  model: IRenderProps<IBoardState>['model'];
}): () => void {
  const onRows = (content: unknown): void => {
    if (isRowsMessage(content)) {
      applyRows(model.get('rows'), content);
    }
  };
  model.on('msg:custom', onRows);
  return () => model.off('msg:custom', onRows);
}

function setPx(
  node: HTMLElement,
  side: 'marginTop' | 'marginBottom',
  px: number
): void {
  const value = px > 0 ? `${Math.round(px)}px` : '';
  if (node.style[side] !== value) {
    node.style[side] = value;
  }
}

/** `fn` at the next animation frame, once however often it is requested (or at once: `flush`). */
class FrameRequest {
  constructor(private readonly _fn: () => void) {}

  readonly request = (): void => {
    if (this._id === null) {
      this._id = requestAnimationFrame(() => {
        this._id = null;
        this._fn();
      });
    }
  };

  flush(): void {
    this.cancel();
    this._fn();
  }

  cancel(): void {
    if (this._id !== null) {
      cancelAnimationFrame(this._id);
      this._id = null;
    }
  }

  private _id: number | null = null;
}

export default {
  initialize,
  render
} satisfies IWidgetModule<IBoardState>;
