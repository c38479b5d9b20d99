/**
 * The "MCP tasks" side panel: the tasks of the current notebook's kernel.
 *
 * Rows are kept by task key and updated in place; only new rows or a changed
 * start time reorder the list. One timer, running only while the panel is
 * shown, refreshes the elapsed time of live tasks.
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

export const SIDEBAR_ID = 'mcp-tasks-jupyter:sidebar';

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
    this._emptyNode = append(this.node, 'div', 'mtj-empty');
    this._listNode = append(this.node, 'div', 'mtj-task-list');
    this._listNode.setAttribute('role', 'list');
    this._listNode.addEventListener('click', event => this._onClick(event));
    this._listNode.addEventListener('keydown', event => this._onKeyDown(event));

    this._tracker.currentChanged.connect(this._onCurrentChanged, this);
    this._registry.storesChanged.connect(this._bindStore, this);
    this._setPanel(this._tracker.currentWidget);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stopTimer();
    this._setPanel(null);
    this._tracker.currentChanged.disconnect(this._onCurrentChanged, this);
    this._registry.storesChanged.disconnect(this._bindStore, this);
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._startTimer();
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
      this._renderAll();
    } else {
      this._renderEmpty();
    }
    this._renderContext();
  }

  private _onStoreChanged(_: KernelTaskStore, change: IStoreChange): void {
    if (change.reset) {
      this._renderAll();
    } else {
      this._renderChanges(change);
    }
  }

  private _renderContext(): void {
    this._contextNode.textContent = this._panel ? this._panel.title.label : '';
  }

  private _renderAll(): void {
    for (const row of this._rows.values()) {
      row.node.remove();
    }
    this._rows.clear();
    const store = this._store;
    if (store) {
      for (const task of store.tasks.values()) {
        this._addRow(store, task);
      }
    }
    this._reorder();
    this._renderEmpty();
  }

  private _renderChanges(change: IStoreChange): void {
    const store = this._store;
    if (!store) {
      return;
    }
    let reorder = false;
    for (const key of change.removed) {
      this._removeRow(key);
    }
    for (const key of change.changed) {
      const task = store.tasks.get(key);
      const row = this._rows.get(key);
      if (!task) {
        this._removeRow(key);
      } else if (!row) {
        this._addRow(store, task);
        reorder = true;
      } else {
        reorder = reorder || row.task.started !== task.started;
        row.update(task, store);
        this._applyFilter(row);
      }
    }
    if (reorder) {
      this._reorder();
    }
    this._renderEmpty();
  }

  private _addRow(store: KernelTaskStore, task: ITask): void {
    const row = new TaskRow(task);
    row.update(task, store);
    this._applyFilter(row);
    this._rows.set(task.key, row);
    this._listNode.appendChild(row.node);
  }

  private _removeRow(key: string): void {
    const row = this._rows.get(key);
    if (row) {
      row.node.remove();
      this._rows.delete(key);
    }
  }

  /** Newest first; moves only the nodes that are out of place. */
  private _reorder(): void {
    const rows = [...this._rows.values()].sort(
      (a, b) =>
        b.task.started - a.task.started || (a.task.key < b.task.key ? -1 : 1)
    );
    let cursor = this._listNode.firstChild;
    for (const row of rows) {
      if (row.node === cursor) {
        cursor = cursor.nextSibling;
      } else {
        this._listNode.insertBefore(row.node, cursor);
      }
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
    } else if (![...this._rows.values()].some(row => !row.node.hidden)) {
      text = EMPTY_TEXT.noMatch;
    }
    this._emptyNode.textContent = text;
    this._emptyNode.hidden = text === '';
    this._emptyNode.dataset.state =
      store?.state ?? (this._panel ? 'no-kernel' : 'no-notebook');
  }

  private _onFilterChanged(): void {
    const value = this._filterNode.value;
    this._filter = FILTERS.find(f => f.value === value) ?? FILTERS[0];
    for (const row of this._rows.values()) {
      this._applyFilter(row);
    }
    this._renderEmpty();
  }

  private _applyFilter(row: TaskRow): void {
    row.node.hidden = !this._filter.test(row.task);
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

  private _onKeyDown(event: KeyboardEvent): void {
    const target = event.target as HTMLElement | null;
    if (
      (event.key === 'Enter' || event.key === ' ') &&
      target?.classList.contains('mtj-task-row') &&
      target.dataset.key !== undefined
    ) {
      event.preventDefault();
      this._reveal(target.dataset.key);
    }
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
    for (const row of this._rows.values()) {
      row.tick();
    }
  }

  private _registry: ITaskRegistry;
  private _tracker: INotebookTracker;
  private _locator: CellLocator;
  private _panel: NotebookPanel | null = null;
  private _store: KernelTaskStore | null = null;
  private _rows = new Map<string, TaskRow>();
  private _filter: IFilter = FILTERS[0];
  private _timer: number | null = null;
  private _filterNode: HTMLSelectElement;
  private _contextNode: HTMLDivElement;
  private _emptyNode: HTMLDivElement;
  private _listNode: HTMLDivElement;
}
