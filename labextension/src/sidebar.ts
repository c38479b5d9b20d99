/**
 * The "MCP tasks" side panel: the tasks of the current notebook's kernel.
 *
 * A virtualized list (`virtuallist.ts`): only the rows in view are in the DOM,
 * however many tasks the kernel has. The order (newest first) and the status
 * filter are worked out over the store's tasks, never the DOM. The store's
 * changes are gathered and drawn once per animation frame; a drawn row is
 * updated in place. One timer, running only while the panel is shown,
 * refreshes the elapsed time of the live tasks in view.
 */

import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import type { CellLocator } from './cells';
import { tasksIcon } from './icon';
import { FAILED_STATUSES, ITask, isRunning, isWaiting } from './protocol';
import type { ITaskRegistry } from './registry';
import { append, TaskRow } from './row';
import type { IStoreChange, KernelTaskStore } from './store';
import { VirtualList } from './virtuallist';

export const SIDEBAR_ID = 'mcp-tasks-jupyter:sidebar';

/** A row's height (px) until one is measured: a row with a message line and no bar. */
export const ROW_ESTIMATE = 56;

export const EMPTY_TEXT = {
  noNotebook: 'Open a notebook to see its MCP tasks',
  noKernel: 'This notebook has no kernel',
  noComms: 'The MCP tasks of this kernel are not available in this view',
  connecting: 'Asking the kernel for its MCP tasks…',
  notLoaded:
    'The mcp_tasks_jupyter library is not loaded in this kernel (%load_ext mcp_tasks_jupyter)',
  dead: 'The kernel is dead',
  noTasks: 'No MCP tasks in this kernel yet',
  noMatch: 'No MCP tasks match this filter'
};

interface IFilter {
  readonly value: string;
  readonly label: string;
  readonly test: (task: ITask) => boolean;
}

const FILTERS: readonly IFilter[] = [
  { value: 'all', label: 'All', test: () => true },
  { value: 'running', label: 'Running', test: isRunning },
  { value: 'needs-input', label: 'Needs input', test: isWaiting },
  {
    value: 'completed',
    label: 'Completed',
    test: t => t.status === 'completed'
  },
  {
    value: 'failed',
    label: 'Failed',
    test: t => FAILED_STATUSES.has(t.status)
  },
  {
    value: 'cancelled',
    label: 'Cancelled',
    test: t => t.status === 'cancelled'
  }
];

export interface ISidebarOptions {
  registry: ITaskRegistry;
  tracker: INotebookTracker;
  locator: CellLocator;
}

export class TasksSidebar extends Widget {
  constructor(options: ISidebarOptions) {
    super();
    this._registry = options.registry;
    this._tracker = options.tracker;
    this._locator = options.locator;

    this.id = SIDEBAR_ID;
    this.title.icon = tasksIcon;
    this.title.caption = 'MCP tasks';
    this.addClass('mtj-sidebar');

    const header = append(this.node, 'div', 'mtj-header');
    append(header, 'h2', 'mtj-title').textContent = 'MCP tasks';
    this._filterNode = append(header, 'select', 'mtj-status-filter');
    this._filterNode.setAttribute('aria-label', 'Show tasks by status');
    for (const filter of FILTERS) {
      const option = append(this._filterNode, 'option');
      option.value = filter.value;
      option.textContent = filter.label;
    }
    this._filterNode.addEventListener('change', () => this._onFilterChanged());
    this._contextNode = append(this.node, 'div', 'mtj-context');
    this._nameNode = append(this._contextNode, 'span', 'mtj-context-name');
    this._countNode = append(this._contextNode, 'span', 'mtj-count');
    this._countNode.setAttribute('aria-live', 'off');
    this._emptyNode = append(this.node, 'div', 'mtj-empty');
    this._listNode = append(this.node, 'div', 'mtj-task-list');
    this._listNode.setAttribute('role', 'list');
    this._listNode.setAttribute('aria-label', 'MCP tasks');
    // Focusable, so that the arrow keys still work when the focused row scrolls out of the DOM.
    this._listNode.tabIndex = -1;
    this._listNode.addEventListener('click', event => this._onClick(event));
    this._listNode.addEventListener('keydown', event => this._onKeyDown(event));
    this._list = new VirtualList<TaskRow>({
      scroller: this._listNode,
      estimate: ROW_ESTIMATE,
      renderer: {
        create: key => this._createRow(key),
        update: (row, key) => this._updateRow(row, key)
      }
    });

    this._tracker.currentChanged.connect(this._onCurrentChanged, this);
    this._registry.storesChanged.connect(this._bindStore, this);
    this._setPanel(this._tracker.currentWidget);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stopTimer();
    this._cancelFlush();
    this._list.dispose();
    this._setPanel(null);
    this._tracker.currentChanged.disconnect(this._onCurrentChanged, this);
    this._registry.storesChanged.disconnect(this._bindStore, this);
    super.dispose();
  }

  /** Rows in view: what the virtualized list draws. */
  get list(): VirtualList<TaskRow> {
    return this._list;
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._list.render(); // hidden, it could not measure the view
    this._startTimer();
  }

  protected onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    this._list.schedule();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._startTimer();
  }

  protected onBeforeHide(msg: Message): void {
    this._stopTimer();
    super.onBeforeHide(msg);
  }

  protected onBeforeDetach(msg: Message): void {
    this._stopTimer();
    super.onBeforeDetach(msg);
  }

  private _onCurrentChanged(
    _: INotebookTracker,
    panel: NotebookPanel | null
  ): void {
    this._setPanel(panel);
  }

  private _setPanel(panel: NotebookPanel | null): void {
    if (panel === this._panel) {
      return;
    }
    if (this._panel) {
      this._panel.sessionContext.kernelChanged.disconnect(
        this._bindStore,
        this
      );
      this._panel.title.changed.disconnect(this._renderContext, this);
      this._panel.disposed.disconnect(this._onPanelDisposed, this);
    }
    this._panel = panel;
    if (panel) {
      panel.sessionContext.kernelChanged.connect(this._bindStore, this);
      panel.title.changed.connect(this._renderContext, this);
      panel.disposed.connect(this._onPanelDisposed, this);
    }
    this._bindStore();
  }

  /** The tracker does not always say when its current notebook closes. */
  private _onPanelDisposed(panel: NotebookPanel): void {
    const next = this._tracker.currentWidget;
    this._setPanel(next && next !== panel && !next.isDisposed ? next : null);
  }

  /** Show the store of the current notebook's kernel (it may have changed or been replaced). */
  private _bindStore(): void {
    if (this.isDisposed) {
      return;
    }
    const kernel = this._panel?.sessionContext.session?.kernel ?? null;
    const store = kernel ? this._registry.follow(kernel) : null;
    if (store !== this._store) {
      this._store?.changed.disconnect(this._onStoreChanged, this);
      this._store = store;
      store?.changed.connect(this._onStoreChanged, this);
      this._listNode.scrollTop = 0;
      this._renderAll();
    } else {
      this._renderEmpty();
    }
    this._renderContext();
  }

  /** Gather the store's changes; draw them at the next animation frame (once per frame). */
  private _onStoreChanged(_: KernelTaskStore, change: IStoreChange): void {
    if (change.reset || change.removed.length) {
      // Rare (a restart, a snapshot): at once, so the list never holds a key the store dropped.
      this._renderAll();
      return;
    }
    for (const key of change.changed) {
      this._pending.add(key);
    }
    if (this._flushFrame === null) {
      this._flushFrame = requestAnimationFrame(() => {
        this._flushFrame = null;
        this._flush();
      });
    }
  }

  private _cancelFlush(): void {
    if (this._flushFrame !== null) {
      cancelAnimationFrame(this._flushFrame);
      this._flushFrame = null;
    }
  }

  /** Draw what the store's changes since the last frame changed. */
  private _flush(): void {
    const changed = [...this._pending];
    this._pending.clear();
    this._list.invalidate(changed);
    this._arrange();
    this._list.render();
    this._renderEmpty();
  }

  private _renderContext(): void {
    this._nameNode.textContent = this._panel ? this._panel.title.label : '';
    this._contextNode.hidden = !this._panel;
  }

  /** Forget every row and draw the store's tasks afresh. */
  private _renderAll(): void {
    this._cancelFlush();
    this._pending.clear();
    this._list.invalidateAll();
    this._arrange();
    this._list.render();
    this._renderEmpty();
  }

  /** Newest first, then by key; only the tasks the filter lets through. Over the model, not the DOM. */
  private _arrange(): void {
    const store = this._store;
    const tasks = store ? [...store.tasks.values()] : [];
    tasks.sort(
      (a, b) =>
        b.started - a.started || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    );
    const test = this._filter.test;
    const shown = tasks.filter(task => test(task));
    this._list.setKeys(shown.map(task => task.key));
    this._renderCount(tasks, shown.length);
  }

  /** `1,000 tasks · 990 running`, or `10 of 1,000 tasks` under a filter; nothing without tasks. */
  private _renderCount(tasks: readonly ITask[], shown: number): void {
    let text = '';
    if (tasks.length) {
      const total = `${tasks.length.toLocaleString('en-US')} task${tasks.length === 1 ? '' : 's'}`;
      if (this._filter !== FILTERS[0]) {
        text = `${shown.toLocaleString('en-US')} of ${total}`;
      } else {
        const running = tasks.filter(isRunning).length;
        text = running
          ? `${total} · ${running.toLocaleString('en-US')} running`
          : total;
      }
    }
    if (this._countNode.textContent !== text) {
      this._countNode.textContent = text;
    }
  }

  private _createRow(key: string): TaskRow | null {
    const store = this._store;
    const task = store?.tasks.get(key);
    if (!store || !task) {
      return null;
    }
    const row = new TaskRow(task);
    row.update(task, store);
    return row;
  }

  private _updateRow(row: TaskRow, key: string): void {
    const store = this._store;
    const task = store?.tasks.get(key);
    if (store && task) {
      row.update(task, store);
    }
  }

  private _renderEmpty(): void {
    let text = '';
    const store = this._store;
    if (!this._panel) {
      text = EMPTY_TEXT.noNotebook;
    } else if (!store) {
      text = this._panel.sessionContext.session?.kernel
        ? EMPTY_TEXT.noComms
        : EMPTY_TEXT.noKernel;
    } else if (store.state === 'connecting' && store.tasks.size === 0) {
      text = EMPTY_TEXT.connecting;
    } else if (store.state === 'not-loaded') {
      text = EMPTY_TEXT.notLoaded;
    } else if (store.state === 'dead') {
      text = EMPTY_TEXT.dead;
    } else if (store.tasks.size === 0) {
      text = EMPTY_TEXT.noTasks;
    } else if (this._list.keys.length === 0) {
      text = EMPTY_TEXT.noMatch;
    }
    this._emptyNode.textContent = text;
    this._emptyNode.hidden = text === '';
    this._emptyNode.dataset.state =
      store?.state ?? (this._panel ? 'no-kernel' : 'no-notebook');
  }

  /** A new filter answers at once: the rows it lets through, from the top. */
  private _onFilterChanged(): void {
    const value = this._filterNode.value;
    this._filter = FILTERS.find(f => f.value === value) ?? FILTERS[0];
    this._listNode.scrollTop = 0;
    this._arrange();
    this._list.render();
    this._renderEmpty();
  }

  private _onClick(event: MouseEvent): void {
    const target = event.target as Element | null;
    const rowNode = target?.closest<HTMLElement>('.mtj-task-row');
    const key = rowNode?.dataset.key;
    if (!rowNode || key === undefined) {
      return;
    }
    if (target?.closest('.mtj-task-cancel')) {
      event.stopPropagation();
      this._store?.cancel(key);
      return;
    }
    this._reveal(key);
  }

  /**
   * Enter or Space on a row shows its cell; the arrow keys, Home, End, Page Up
   * and Page Down move the focus between rows (drawing the next ones).
   */
  private _onKeyDown(event: KeyboardEvent): void {
    const target = event.target as HTMLElement | null;
    const key = target?.classList.contains('mtj-task-row')
      ? target.dataset.key
      : undefined;
    if ((event.key === 'Enter' || event.key === ' ') && key !== undefined) {
      event.preventDefault();
      this._reveal(key);
      return;
    }
    const keys = this._list.keys;
    if (keys.length === 0) {
      return;
    }
    const at = key === undefined ? -1 : this._list.indexOf(key);
    const page = Math.max(
      1,
      Math.floor(this._listNode.clientHeight / ROW_ESTIMATE) - 1
    );
    let next: number;
    switch (event.key) {
      case 'ArrowDown':
        next = at < 0 ? this._firstInView() : at + 1;
        break;
      case 'ArrowUp':
        next = at < 0 ? this._firstInView() : at - 1;
        break;
      case 'PageDown':
        next = (at < 0 ? this._firstInView() : at) + page;
        break;
      case 'PageUp':
        next = (at < 0 ? this._firstInView() : at) - page;
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = keys.length - 1;
        break;
      default:
        return;
    }
    event.preventDefault();
    next = Math.min(keys.length - 1, Math.max(0, next));
    this._list.scrollToKey(keys[next])?.node.focus({ preventScroll: true });
  }

  /** The index of the first row drawn inside the view (0 if none). */
  private _firstInView(): number {
    const top = this._listNode.scrollTop;
    let first = -1;
    for (const key of this._list.drawn.keys()) {
      const index = this._list.indexOf(key);
      if (
        index >= 0 &&
        this._list.offsetOf(key) >= top &&
        (first < 0 || index < first)
      ) {
        first = index;
      }
    }
    return Math.max(0, first);
  }

  private _reveal(key: string): void {
    const task = this._store?.tasks.get(key);
    if (this._store && task) {
      void this._locator.reveal(this._store.kernelId, task.cellId, this._panel);
    }
  }

  private _startTimer(): void {
    if (this._timer === null && this.isVisible) {
      this._tick();
      this._timer = window.setInterval(() => this._tick(), 1000);
    }
  }

  private _stopTimer(): void {
    if (this._timer !== null) {
      window.clearInterval(this._timer);
      this._timer = null;
    }
  }

  private _tick(): void {
    for (const row of this._list.drawn.values()) {
      row.tick();
    }
  }

  private _registry: ITaskRegistry;
  private _tracker: INotebookTracker;
  private _locator: CellLocator;
  private _panel: NotebookPanel | null = null;
  private _store: KernelTaskStore | null = null;
  private _list: VirtualList<TaskRow>;
  private _pending = new Set<string>();
  private _flushFrame: number | null = null;
  private _filter: IFilter = FILTERS[0];
  private _timer: number | null = null;
  private _filterNode: HTMLSelectElement;
  private _contextNode: HTMLDivElement;
  private _nameNode: HTMLSpanElement;
  private _countNode: HTMLSpanElement;
  private _emptyNode: HTMLDivElement;
  private _listNode: HTMLDivElement;
}
