/**
 * The board's sweeps (`board_widget.py`, issue 33): the task index's
 * `%mcp_map` sweeps, each with its items' counts by state, and the one the
 * person opened, one page of its items at a time. A page is asked of the
 * kernel (`{type: 'sweep', id, offset}`), which reads it from the index: the
 * browser never holds a sweep's 100,000 items, only the page it shows.
 * Everything shown is text (`textContent`): an item's arguments are the
 * index's, which a server never wrote, but a label is escaped all the same.
 */

import { h } from './dom';

/** One sweep as the board lists it (`board_widget._sweep_entry`). */
export interface ISweepEntry {
  id: string;
  tool: string;
  server: string;
  total: number;
  counts: Record<string, number>;
  sent_again: number;
  finished: boolean;
  created?: number;
}

/** One item of an opened sweep (`board_widget._item_entry`). */
export interface ISweepItem {
  position: number;
  label: string;
  state: string;
  status: string | null;
  task_id: string | null;
  note: string | null;
}

/** The opened sweep and one page of its items. */
export interface ISweepPage extends ISweepEntry {
  offset: number;
  size: number;
  items: ISweepItem[];
}

/** Ask the kernel for sweep `id`'s items from `offset` (null: close it). */
export type SweepAsk = (id: string | null, offset: number) => void;

/** The states in the order an item goes through them. */
const STATES = ['ended', 'sent', 'going', 'queued'];

const number = (n: number): string => n.toLocaleString('en-US');

function rank(state: string): number {
  const at = STATES.indexOf(state);
  return at < 0 ? STATES.length : at;
}

/** `2,000 items: 1,500 ended, 20 going, 480 queued (3 sent again), unfinished` */
export function countsText(entry: ISweepEntry): string {
  const counts = entry.counts || {};
  const parts = Object.keys(counts)
    .sort((a, b) => rank(a) - rank(b))
    .map(state => `${number(counts[state])} ${state}`);
  const again = entry.sent_again
    ? ` (${number(entry.sent_again)} sent again)`
    : '';
  const done = entry.finished ? 'finished' : 'unfinished';
  return `${number(entry.total)} items: ${parts.join(', ') || 'none recorded'}${again}, ${done}`;
}

/** `items 101–200 of 2,000` */
export function pageText(page: ISweepPage): string {
  if (!page.items.length) {
    return `no items from ${number(page.offset + 1)} of ${number(page.total)}`;
  }
  const last = page.offset + page.items.length;
  return `items ${number(page.offset + 1)}–${number(last)} of ${number(page.total)}`;
}

/** Whether `page` is a page of a sweep (the kernel's `{}` is none). */
export function isPage(page: unknown): page is ISweepPage {
  return (
    typeof page === 'object' &&
    page !== null &&
    typeof (page as ISweepPage).id === 'string' &&
    Array.isArray((page as ISweepPage).items)
  );
}

function button(text: string, title: string, onClick: () => void) {
  const node = h('button', 'mtj-board-sweep-button', text);
  node.type = 'button';
  node.title = title;
  node.addEventListener('click', onClick);
  return node;
}

/** The sweeps' part of the board: a list, and the opened sweep's page. */
export class BoardSweeps {
  constructor(ask: SweepAsk) {
    this._ask = ask;
    this.node = h('details', 'mtj-board-sweeps');
    this._summary = h('summary', 'mtj-board-sweeps-title');
    this._list = h('ul', 'mtj-board-sweep-list');
    this._page = h('div', 'mtj-board-sweep-page');
    this.node.append(this._summary, this._list, this._page);
  }

  readonly node: HTMLDetailsElement;

  /** Draw `sweeps` (hidden when there are none) and the opened `page`. */
  show(sweeps: ISweepEntry[], page: unknown): void {
    this.node.hidden = !sweeps.length;
    this._summary.textContent = `Sweeps (${sweeps.length})`;
    const opened = isPage(page) ? page : null;
    this._list.replaceChildren(
      ...sweeps.map(sweep => {
        const item = h('li', 'mtj-board-sweep');
        if (opened && opened.id === sweep.id) {
          item.classList.add('mtj-board-sweep-open');
        }
        item.append(
          button(sweep.id, `show the items of sweep ${sweep.id}`, () =>
            this._ask(sweep.id, 0)
          ),
          h('span', null, ` ${sweep.tool} on ${sweep.server}: `),
          h('span', 'mtj-muted', countsText(sweep))
        );
        return item;
      })
    );
    this._drawPage(opened);
    if (opened) {
      this.node.open = true;
    }
  }

  private _drawPage(page: ISweepPage | null): void {
    if (!page) {
      this._page.replaceChildren();
      return;
    }
    const size = page.size || page.items.length || 1;
    const head = h('div', 'mtj-board-sweep-head');
    const previous = button('‹ Previous', 'the previous page', () =>
      this._ask(page.id, Math.max(0, page.offset - size))
    );
    previous.disabled = page.offset <= 0;
    const next = button('Next ›', 'the next page', () =>
      this._ask(page.id, page.offset + size)
    );
    next.disabled = page.offset + page.items.length >= page.total;
    head.append(
      h('strong', null, `${page.id} ${page.tool} on ${page.server}`),
      h('span', 'mtj-muted', ` ${countsText(page)} · ${pageText(page)} `),
      previous,
      next,
      button('Close', 'close this sweep', () => this._ask(null, 0))
    );
    const table = h('table', 'mtj-board-table mtj-board-sweep-items');
    const header = h('tr');
    for (const name of ['#', 'arguments', 'state', 'status', 'task', 'note']) {
      header.append(h('th', null, name));
    }
    table.append(h('thead'), h('tbody'));
    table.tHead?.append(header);
    for (const item of page.items) {
      const row = h('tr');
      row.append(
        h('td', null, item.position),
        h('td', 'mtj-tool', item.label),
        h('td', null, item.state),
        h('td', null, item.status ?? ''),
        h('td', 'mtj-muted', item.task_id ?? ''),
        h('td', 'mtj-muted', item.note ?? '')
      );
      row.title = item.note ?? item.label;
      table.tBodies[0].append(row);
    }
    const wrap = h('div', 'mtj-board-wrap');
    wrap.append(table);
    this._page.replaceChildren(head, wrap);
  }

  private readonly _ask: SweepAsk;
  private readonly _summary: HTMLElement;
  private readonly _list: HTMLUListElement;
  private readonly _page: HTMLDivElement;
}
