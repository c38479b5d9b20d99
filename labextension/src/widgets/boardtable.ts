/**
 * The board's table of the current page. Of its rows, only those in the
 * table's scroll box and OVERSCAN beyond each edge are in the DOM, by the
 * virtual list the side panel uses too (`../virtuallist.ts`): the table's
 * margins stand for the others, and the elements of rows that leave the view
 * are reused for the rows that come in. A row's cells are set with
 * `textContent` only, and only where its data changed; elapsed times of live
 * rows tick (`tick`).
 */

import { inWords } from '../status';
import { VirtualList } from '../virtuallist';
import {
  type BoardRow,
  cancellable,
  clockText,
  elapsedText,
  type IBoardChoice
} from './boardrows';
import { button, h } from './dom';
import { statusClass } from './live';

/** Rows drawn beyond each edge of the table's scroll box, so that a short scroll shows no gap. */
export const OVERSCAN = 8;

/** A row's height in px until one is measured. */
const ROW_ESTIMATE = 22;

/** What the table tells the board. */
export interface ITableHooks {
  /** The Cancel of the row of `key` was clicked (it is off already). */
  cancel(key: number): void;
  /** A row's tick box changed (`choice.picked` says so already). */
  picked(): void;
}

interface ICells {
  pick: HTMLInputElement;
  tool: HTMLTableCellElement;
  toolName: HTMLSpanElement;
  args: HTMLSpanElement;
  origin: HTMLSpanElement;
  started: HTMLTableCellElement;
  server: HTMLTableCellElement;
  message: HTMLTableCellElement;
  elapsed: HTMLTableCellElement;
  badge: HTMLSpanElement;
  bar: HTMLDivElement;
  fill: HTMLDivElement;
  progressText: HTMLSpanElement;
  cancel: HTMLButtonElement;
}

/** A drawn row: its cells and the data they show (reused for another key as the view moves). */
interface IEntry {
  readonly node: HTMLTableRowElement;
  key: number;
  cells: ICells;
  row: BoardRow | null;
}

export class BoardTable {
  constructor(
    head: HTMLTableSectionElement,
    private readonly _choice: IBoardChoice,
    private readonly _hooks: ITableHooks,
    private readonly _now: () => number
  ) {
    this.node = h('div', 'mtj-board-wrap');
    const table = h('table', 'mtj-board-table');
    const body = h('tbody');
    table.append(head, body);
    this.node.append(table);
    this._list = new VirtualList<IEntry>({
      scroller: this.node,
      container: body,
      space: (above, below) => {
        setPx(table, 'marginTop', above);
        setPx(table, 'marginBottom', below);
      },
      lead: () => head.offsetHeight,
      overscan: OVERSCAN,
      estimate: ROW_ESTIMATE,
      positions: false,
      wholeWhileHidden: true,
      renderer: {
        create: key => this._create(key),
        update: (entry, key) => this._draw(entry, key),
        recycle: (entry, key) => this._draw(entry, key)
      }
    });
  }

  /** The scroll box (`.mtj-board-wrap`) holding the table. */
  readonly node: HTMLDivElement;

  /** Draw `rows` (the page, in order) now: those in view. */
  show(rows: readonly BoardRow[]): void {
    this._rows = new Map(rows.map(row => [String(row.key), row]));
    this._list.setKeys([...this._rows.keys()]);
    this._list.invalidate(this._list.drawn.keys());
    this._list.render();
  }

  /** Bring the drawn rows' tick boxes and Cancel buttons up to the choice now. */
  refresh(): void {
    this._list.invalidate(this._list.drawn.keys());
    this._list.render();
  }

  /** The elapsed times of the drawn rows still running. */
  tick(): void {
    for (const entry of this._list.drawn.values()) {
      const row = entry.row;
      if (row && row.live && row.finished === null) {
        entry.cells.elapsed.textContent = elapsedText(row, this._now());
      }
    }
  }

  dispose(): void {
    this._list.dispose();
  }

  private _create(key: string): IEntry | null {
    if (!this._rows.has(key)) {
      return null;
    }
    const entry = this._makeRow();
    this._draw(entry, key);
    return entry;
  }

  /** Show the row of `key` in `entry`, touching only the cells whose data changed. */
  private _draw(entry: IEntry, key: string): void {
    const row = this._rows.get(key);
    if (!row) {
      return;
    }
    entry.key = row.key;
    if (entry.row !== row) {
      fillRow(entry, row, this._now());
    }
    const c = entry.cells;
    const over = !row.live || row.finished !== null;
    c.cancel.disabled = over || this._choice.cancelAsked.has(row.key);
    c.pick.checked = this._choice.picked.has(row.key);
  }

  private _makeRow(): IEntry {
    const tr = h('tr');
    const pickCell = h('td', 'mtj-board-pick');
    const pick = h('input');
    pick.type = 'checkbox';
    pick.setAttribute('aria-label', 'select this task');
    pick.addEventListener('change', () => {
      if (pick.checked) {
        this._choice.picked.add(entry.key);
      } else {
        this._choice.picked.delete(entry.key);
      }
      this._hooks.picked();
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
      this._choice.cancelAsked.add(entry.key);
      this._hooks.cancel(entry.key);
    });
    action.append(cancel);
    const cells: ICells = {
      pick,
      tool,
      toolName,
      args,
      origin,
      started: h('td', 'mtj-board-started'),
      server: h('td'),
      message: h('td', 'mtj-board-message'),
      elapsed: h('td', 'mtj-board-elapsed'),
      badge,
      bar,
      fill,
      progressText,
      cancel
    };
    tr.append(
      pickCell,
      tool,
      cells.server,
      status,
      cells.message,
      progress,
      cells.started,
      cells.elapsed,
      action
    );
    const entry: IEntry = { node: tr, key: -1, cells, row: null };
    return entry;
  }

  private _list: VirtualList<IEntry>;
  /** The rows of the page, by key. */
  private _rows = new Map<string, BoardRow>();
}

/** Set the cells of `entry` to `row`, only those whose data differs from what they show. */
function fillRow(entry: IEntry, row: BoardRow, now: number): void {
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
  entry.node.classList.toggle('mtj-board-static', !live);
  c.pick.hidden = !cancellable(row);
  entry.row = row;
  c.elapsed.textContent = elapsedText(row, now);
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
