/**
 * The board's controls: the search, the status and server filters, the history
 * toggle, the pager, the column heads (sorting, and the box that ticks every
 * running task shown), and the cancel buttons (the ticked tasks, every running
 * one). They change what the person chose (`IBoardChoice`) and say so
 * (`changed`); only cancelling reaches the kernel, and the history toggle,
 * which the kernel keeps (the table saved with the notebook holds the history
 * rows only when they were on screen).
 */

import {
  arrange,
  type BoardRow,
  cancellable,
  type IBoardChoice,
  type IBoardState,
  type IPage,
  PAGE,
  type SortKey
} from './boardrows';
import type { IWidgetModel } from './anywidget';
import { button, h } from './dom';

/** `[title, sort key or null]` of each column (the first holds the rows' tick boxes). */
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

/** What the controls tell the board. */
export interface IControlHooks {
  /** The choice changed: draw the board again. */
  changed(): void;
  /** Every running task's cancellation was asked for: their rows' Cancel goes off. */
  cancelledAll(): void;
}

export class BoardControls {
  constructor(
    private readonly _model: IWidgetModel<IBoardState>,
    private readonly _choice: IBoardChoice,
    private readonly _hooks: IControlHooks
  ) {
    this.bar = h('div', 'mtj-board-controls');
    this.bar.append(
      this._search(),
      this._status,
      this._server,
      this._history(),
      this._pager()
    );
    this.actions = h('div', 'mtj-board-actions');
    this.actions.append(this._cancelPicked(), this._cancelRunning());
    this.head = this._head();
  }

  /** The search, filters, history toggle and pager (`.mtj-board-controls`). */
  readonly bar: HTMLDivElement;
  /** The cancel buttons (`.mtj-board-actions`). */
  readonly actions: HTMLDivElement;
  /** The table's head: the column titles, sortable, and the tick-all box. */
  readonly head: HTMLTableSectionElement;

  /** Bring every control up to `rows` (the board's) and `page` (what the view shows of them). */
  show(rows: readonly BoardRow[], page: IPage): void {
    const { view, picked } = this._choice;
    this._options(
      this._status,
      rows.map(r => r.status),
      view.status,
      'all statuses'
    );
    this._options(
      this._server,
      rows.map(r => r.server),
      view.server,
      'all servers'
    );
    for (const [th, title, sortKey] of this._sortable) {
      const on = view.sort === sortKey;
      th.textContent = on ? `${title} ${view.descending ? '▼' : '▲'}` : title;
      th.setAttribute(
        'aria-sort',
        on ? (view.descending ? 'descending' : 'ascending') : 'none'
      );
    }
    const { shown, first } = page;
    this._pageText.textContent = shown.length
      ? ` rows ${first + 1}–${first + page.rows.length} of ${shown.length} `
      : ' no rows ';
    this._prev.disabled = view.page === 0;
    this._next.disabled = view.page >= page.pages - 1;
    this._pagerNode.hidden = shown.length <= PAGE;

    const history = rows.filter(r => !r.live).length;
    const running = rows.filter(cancellable).length;
    const shownRunning = shown.filter(cancellable);
    this._historyText.textContent = `history (${history} earlier)`;
    this._historyLabel.hidden = history === 0;
    this._picked.textContent = `Cancel selected (${picked.size})`;
    this._picked.disabled = picked.size === 0;
    this._running.textContent = `Cancel all running (${running})`;
    this._running.disabled = running === 0;
    this.actions.hidden = running === 0 && picked.size === 0;
    this._pickAll.hidden = shownRunning.length === 0;
    this._pickAll.checked =
      shownRunning.length > 0 && shownRunning.every(r => picked.has(r.key));
  }

  /** The choice of page, sort or filter changed: back to the first page, drawn again. */
  private _chose(): void {
    this._choice.view.page = 0;
    this._hooks.changed();
  }

  private _search(): HTMLInputElement {
    const search = h('input', 'mtj-board-search');
    search.type = 'search';
    search.placeholder = 'search tool, server, status, message, task id';
    search.setAttribute('aria-label', 'search tasks');
    search.addEventListener('input', () => {
      this._choice.view.search = search.value.trim().toLowerCase();
      this._chose();
    });
    return search;
  }

  private _filter(label: string, pick: (value: string) => void) {
    const select = h('select', 'mtj-board-filter');
    select.setAttribute('aria-label', label);
    select.addEventListener('change', () => {
      pick(select.value);
      this._chose();
    });
    return select;
  }

  private _history(): HTMLLabelElement {
    const box = h('input');
    box.type = 'checkbox';
    box.checked = Boolean(this._choice.view.history);
    box.addEventListener('change', () => {
      this._choice.view.history = box.checked;
      // The kernel keeps the choice: the table saved with the notebook holds the history rows only
      // when they were on screen (and marks them as history).
      this._model.set('show_history', box.checked);
      this._model.save_changes();
      this._chose();
    });
    this._historyLabel.append(box, this._historyText);
    this._historyLabel.title =
      "also show tasks from earlier kernels, other notebooks and the server's own list";
    return this._historyLabel;
  }

  private _pager(): HTMLSpanElement {
    const view = this._choice.view;
    this._prev.addEventListener('click', () => {
      view.page = Math.max(0, view.page - 1);
      this._hooks.changed();
    });
    this._next.addEventListener('click', () => {
      view.page += 1;
      this._hooks.changed();
    });
    this._pagerNode.append(this._prev, this._pageText, this._next);
    return this._pagerNode;
  }

  private _cancelPicked(): HTMLButtonElement {
    const { picked, cancelAsked } = this._choice;
    this._picked.addEventListener('click', () => {
      const keys = [...picked];
      if (keys.length) {
        this._model.send({ type: 'cancel', keys });
        for (const key of keys) {
          cancelAsked.add(key);
        }
        picked.clear();
        this._hooks.changed();
      }
    });
    return this._picked;
  }

  private _cancelRunning(): HTMLButtonElement {
    const { picked, cancelAsked } = this._choice;
    this._running.addEventListener('click', () => {
      this._model.send({ type: 'cancel_running' });
      this._running.disabled = true;
      picked.clear();
      for (const row of this._model.get('rows') || []) {
        if (cancellable(row)) {
          cancelAsked.add(row.key);
        }
      }
      this._hooks.cancelledAll();
    });
    return this._running;
  }

  private _head(): HTMLTableSectionElement {
    const view = this._choice.view;
    const pickAll = this._pickAll;
    pickAll.type = 'checkbox';
    pickAll.setAttribute('aria-label', 'select every running task shown');
    pickAll.addEventListener('change', () => {
      for (const row of arrange(this._model.get('rows') || [], view)) {
        if (cancellable(row)) {
          if (pickAll.checked) {
            this._choice.picked.add(row.key);
          } else {
            this._choice.picked.delete(row.key);
          }
        }
      }
      this._hooks.changed();
    });
    const tr = h('tr');
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
          this._chose();
        });
        this._sortable.push([th, title, sortKey]);
      }
      tr.append(th);
    });
    const head = h('thead');
    head.append(tr);
    return head;
  }

  /** Offer `values` (and `chosen`) in `select`, rebuilt only when they change. */
  private _options(
    select: HTMLSelectElement,
    values: string[],
    chosen: string,
    allLabel: string
  ): void {
    const wanted = [...new Set(chosen ? [...values, chosen] : values)].sort();
    const signature = wanted.join('\u0000');
    if (this._offered.get(select) !== signature) {
      this._offered.set(select, signature);
      select.replaceChildren();
      option(select, '', allLabel);
      for (const value of wanted) {
        option(select, value, value);
      }
    }
    select.value = chosen;
  }

  private readonly _status = this._filter('filter by status', value => {
    this._choice.view.status = value;
  });
  private readonly _server = this._filter('filter by server', value => {
    this._choice.view.server = value;
  });
  private readonly _historyLabel = h('label', 'mtj-board-history-toggle');
  private readonly _historyText = h('span', null, 'history');
  private readonly _pagerNode = h('span', 'mtj-board-pager');
  private readonly _prev = button('‹ prev', 'mtj-board-page');
  private readonly _next = button('next ›', 'mtj-board-page');
  private readonly _pageText = h('span', 'mtj-muted mtj-board-range');
  private readonly _picked = button(
    'Cancel selected',
    'jp-mod-styled jp-mod-warn mtj-board-cancel-picked',
    'ask the server to cancel the ticked tasks'
  );
  private readonly _running = button(
    'Cancel all running',
    'jp-mod-styled jp-mod-warn mtj-board-cancel-running',
    'ask the server to cancel every running task on this board'
  );
  private readonly _pickAll = h('input', 'mtj-board-pick-all');
  /** The sortable heads: `[th, title, sort key]`. */
  private readonly _sortable: [HTMLTableCellElement, string, SortKey][] = [];
  /** What each select offers, as "a\u0000b". */
  private readonly _offered = new Map<HTMLSelectElement, string>();
}

function option(select: HTMLSelectElement, value: string, label: string): void {
  const node = h('option', null, label);
  node.value = value;
  select.append(node);
}
