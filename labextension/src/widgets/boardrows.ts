/**
 * The board's rows (`view.board_row`, `board_widget.py`), as data: the kernel's
 * rows and the `rows` messages laid over them in place, and what a view of them
 * shows: filtered, searched, sorted and paged here (no round trip to the kernel),
 * with the texts of their times and of the caption. No DOM: the table
 * (`boardtable.ts`) and the controls (`boardcontrols.ts`) draw from this.
 */

import type { ISweepEntry, ISweepPage } from './boardsweeps';
import { formatDuration } from '../format';

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
  /** The task index's sweeps, and the opened one's page ({}: none; `boardsweeps.ts`). */
  sweeps?: ISweepEntry[];
  sweep_page?: ISweepPage | Record<string, never>;
}

/** Rows on one page. */
export const PAGE = 50;

export type SortKey = 'tool' | 'server' | 'status' | 'started' | 'elapsed';

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

/** What the person chose on one view of the board (kept in the browser; the history toggle also in the kernel). */
export interface IBoardChoice {
  view: IBoardView;
  /** The keys of the ticked rows (running tasks only). */
  picked: Set<number>;
  /** The keys of the tasks whose cancellation was asked for here (their Cancel stays off). */
  cancelAsked: Set<number>;
}

/** The page a view shows. */
export interface IPage {
  /** Every row the view shows, in its order. */
  shown: BoardRow[];
  /** The rows of the current page. */
  rows: BoardRow[];
  /** The index in `shown` of the page's first row. */
  first: number;
  pages: number;
}

/** The page of `rows` the view shows (its page number brought back in range). */
export function pageOf(rows: readonly BoardRow[], view: IBoardView): IPage {
  const shown = arrange(rows, view);
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  view.page = Math.min(view.page, pages - 1);
  const first = view.page * PAGE;
  return { shown, rows: shown.slice(first, first + PAGE), first, pages };
}

/** Forget the ticks and asked cancellations of rows gone or no longer running. */
export function prune(choice: IBoardChoice, rows: readonly BoardRow[]): void {
  const byKey = new Map(rows.map(r => [r.key, r]));
  for (const keys of [choice.picked, choice.cancelAsked]) {
    for (const key of keys) {
      const row = byKey.get(key);
      if (!row || !cancellable(row)) {
        keys.delete(key);
      }
    }
  }
}

/** `12 shown: 10 tasks of this kernel, 2 from the history (server demo)`. */
export function captionText(
  rows: readonly BoardRow[],
  shown: number,
  view: IBoardView,
  filters: { server: string | null; status: string | null }
): string {
  const named: string[] = [];
  if (filters.server) {
    named.push(`server ${filters.server}`);
  }
  if (filters.status) {
    named.push(`status ${filters.status}`);
  }
  const history = rows.filter(r => !r.live).length;
  const live = rows.length - history;
  return (
    `${shown} shown: ${live} task${live === 1 ? '' : 's'} of this kernel` +
    (view.history && history ? `, ${history} from the history` : '') +
    (named.length ? ` (${named.join(', ')})` : '')
  );
}
