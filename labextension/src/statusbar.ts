/**
 * The status-bar item: running and waiting tasks across every kernel followed, saying whose they
 * are: the current notebook's, and the other notebooks' apart (a notebook with no tasks of its own
 * reads "MCP (other notebooks): ...", never as if the count were its own). Shown only while some
 * task runs or waits; a click opens the side panel.
 */

import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import type { ITaskRegistry } from './registry';
import { statusText } from './status';

/** Where the current notebook is: the id of its kernel, or null with no notebook (or no kernel). */
export interface ICurrentKernel {
  readonly id: () => string | null;
  readonly changed: ISignal<unknown, unknown>;
}

export class TasksStatus extends Widget {
  constructor(
    private readonly _registry: ITaskRegistry,
    onClick: () => void,
    private readonly _current: ICurrentKernel | null = null
  ) {
    super({ node: document.createElement('div') });
    this.addClass('mtj-statusbar');
    this.addClass('jp-StatusBar-TextItem');
    this.node.setAttribute('role', 'button');
    this.node.addEventListener('click', onClick);
    this._registry.changed.connect(this._render, this);
    this._registry.storesChanged.connect(this._render, this);
    this._current?.changed.connect(this._render, this);
    this._render();
  }

  /** Whether there is anything to show. */
  get active(): boolean {
    return this._active;
  }

  get activeChanged(): ISignal<this, void> {
    return this._activeChanged;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._registry.changed.disconnect(this._render, this);
    this._registry.storesChanged.disconnect(this._render, this);
    this._current?.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _render(): void {
    const currentId = this._current?.id() ?? null;
    const here = { running: 0, waiting: 0, queued: 0 };
    const others = { running: 0, waiting: 0, queued: 0 };
    for (const [kernelId, store] of this._registry.stores) {
      const into = kernelId === currentId ? here : others;
      into.running += store.counts.running;
      into.waiting += store.counts.waiting;
      into.queued += store.counts.queued;
    }
    const text = statusText(currentId === null ? null : here, others);
    if (this.node.textContent !== text) {
      this.node.textContent = text;
    }
    const running = here.running + others.running;
    const waiting = here.waiting + others.waiting;
    this.node.title =
      currentId === null
        ? 'MCP tasks running and waiting for input in every notebook (click to show them)'
        : "MCP tasks running and waiting for input: this notebook's, then the other notebooks' (click to show this notebook's)";
    this.node.dataset.running = String(running);
    this.node.dataset.waiting = String(waiting);
    this.node.dataset.otherRunning = String(others.running);
    this.node.dataset.otherWaiting = String(others.waiting);
    this.node.classList.toggle('mtj-mod-waiting', waiting > 0);
    const queued = here.queued + others.queued;
    this.node.dataset.queued = String(queued);
    const active = running + waiting + queued > 0;
    if (active !== this._active) {
      this._active = active;
      this._activeChanged.emit();
    }
  }

  private _active = false;
  private _activeChanged = new Signal<this, void>(this);
}
