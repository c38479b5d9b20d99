/**
 * One row of the side panel: a task's tool, server, status (in words: `needs
 * input`, `tool error`), elapsed time, message, progress (a bar to its total,
 * else an activity bar while it works), cancel error and Cancel button.
 * `update` touches only what changed; every text from the kernel goes through
 * `textContent`.
 */

import { elapsedSeconds, formatDuration } from './format';
import { ITask, isRunning, isTerminal, isWaiting } from './protocol';
import { taskName } from './groups';
import { inWords } from './status';
import type { KernelTaskStore } from './store';

export class TaskRow {
  readonly node: HTMLDivElement;

  constructor(public task: ITask) {
    const node = (this.node = document.createElement('div'));
    node.className = 'mtj-task-row';
    node.dataset.key = task.key;
    node.tabIndex = 0;
    node.setAttribute('role', 'listitem');
    const head = append(node, 'div', 'mtj-task-head');
    this._tool = append(head, 'span', 'mtj-task-tool');
    this._server = append(head, 'span', 'mtj-task-server');
    this._elapsed = append(head, 'span', 'mtj-task-elapsed');
    const line = (this._line = append(node, 'div', 'mtj-task-line'));
    this._status = append(line, 'span', 'mtj-task-status');
    this._badges = append(line, 'span', 'mtj-task-badges');
    this._message = append(node, 'div', 'mtj-task-message');
  }

  update(task: ITask, store: KernelTaskStore): void {
    this.task = task;
    const node = this.node;
    setData(node, 'status', task.status);
    node.classList.toggle('mtj-mod-waiting', isWaiting(task));
    node.classList.toggle('mtj-mod-terminal', isTerminal(task));
    node.title = [
      task.taskId ? `Task ${task.taskId}` : 'Not a task yet',
      task.cellId ? 'Click to show its cell' : ''
    ]
      .filter(Boolean)
      .join(' · ');
    const name = task.tool ? taskName(task) : '(no tool)';
    setText(this._tool, name);
    // A narrow panel cuts the name's end (the label= the kernel puts first survives): whole here.
    if (this._tool.title !== name) {
      this._tool.title = name;
    }
    setText(this._server, task.server);
    setText(this._status, inWords(task.status));
    const badges = [
      task.needsInput && task.status !== 'input_required' ? 'needs input' : '',
      task.cached ? 'cached' : ''
    ];
    setText(this._badges, badges.filter(Boolean).join(' · '));
    setText(this._message, task.message ?? '');
    this._message.hidden = !task.message;
    this._renderProgress(task);
    this._renderError(store.cancelError(task.key));
    this._renderCancel(!isTerminal(task), store.isCancelPending(task.key));
    this._renderElapsed();
  }

  /** Refresh the elapsed time of a live task (a finished one keeps what `update` wrote). */
  tick(): void {
    if (this.task.finished === null && !isTerminal(this.task)) {
      this._renderElapsed();
    }
  }

  private _renderElapsed(): void {
    const { started, finished } = this.task;
    setText(this._elapsed, formatDuration(elapsedSeconds(started, finished)));
  }

  private _renderProgress(task: ITask): void {
    const known =
      task.progress !== null && task.total !== null && task.total > 0;
    if (!known && !isRunning(task)) {
      this._progress?.remove();
      this._progress = null;
      return;
    }
    if (!this._progress) {
      this._progress = document.createElement('progress');
      this._progress.className = 'mtj-task-progress';
      this._message.before(this._progress);
    }
    if (!known) {
      // No total (the ext dialect sends no progress at all): an activity bar.
      this._progress.removeAttribute('value');
      this._progress.title = 'working';
      return;
    }
    const total = task.total as number;
    const value = Math.min(Math.max(task.progress as number, 0), total);
    this._progress.max = total;
    this._progress.value = value;
    this._progress.title = `${value} / ${total}`;
  }

  private _renderError(error: string | undefined): void {
    if (!error) {
      this._error?.remove();
      this._error = null;
      return;
    }
    if (!this._error) {
      this._error = append(this.node, 'div', 'mtj-task-error');
    }
    setText(this._error, error);
  }

  private _renderCancel(cancellable: boolean, pending: boolean): void {
    if (!cancellable) {
      this._cancel?.remove();
      this._cancel = null;
      return;
    }
    if (!this._cancel) {
      this._cancel = append(this._line, 'button', 'mtj-task-cancel');
      this._cancel.type = 'button';
      this._cancel.textContent = 'Cancel';
      this._cancel.classList.add('jp-mod-styled');
    }
    this._cancel.disabled = pending;
  }

  private _line: HTMLDivElement;
  private _tool: HTMLSpanElement;
  private _server: HTMLSpanElement;
  private _status: HTMLSpanElement;
  private _badges: HTMLSpanElement;
  private _elapsed: HTMLSpanElement;
  private _message: HTMLDivElement;
  private _progress: HTMLProgressElement | null = null;
  private _error: HTMLDivElement | null = null;
  private _cancel: HTMLButtonElement | null = null;
}

export function append<K extends keyof HTMLElementTagNameMap>(
  parent: HTMLElement,
  tag: K,
  className?: string
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (className) {
    element.className = className;
  }
  parent.appendChild(element);
  return element;
}

function setText(element: HTMLElement, text: string): void {
  if (element.textContent !== text) {
    element.textContent = text;
  }
}

function setData(element: HTMLElement, name: string, value: string): void {
  if (element.dataset[name] !== value) {
    element.dataset[name] = value;
  }
}
