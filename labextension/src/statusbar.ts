/**
 * The status-bar item: running and waiting tasks across every kernel followed.
 * Shown only while some task runs or waits; a click opens the side panel.
 */

import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import type { ITaskRegistry } from './registry';

export class TasksStatus extends Widget {
  constructor(
    private readonly _registry: ITaskRegistry,
    onClick: () => void
  ) {
    super({ node: document.createElement('div') });
    this.addClass('mtj-statusbar');
    this.addClass('jp-StatusBar-TextItem');
    this.node.title =
      'MCP tasks running and waiting for input (click to show them)';
    this.node.setAttribute('role', 'button');
    this.node.addEventListener('click', onClick);
    this._registry.changed.connect(this._render, this);
    this._registry.storesChanged.connect(this._render, this);
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
    super.dispose();
  }

  private _render(): void {
    let running = 0;
    let waiting = 0;
    for (const store of this._registry.stores.values()) {
      const counts = store.counts;
      running += counts.running;
      waiting += counts.waiting;
    }
    const text =
      running + waiting > 0
        ? `MCP: ${running} running · ${waiting} waiting`
        : 'MCP: idle';
    if (this.node.textContent !== text) {
      this.node.textContent = text;
    }
    this.node.dataset.running = String(running);
    this.node.dataset.waiting = String(waiting);
    this.node.classList.toggle('mtj-mod-waiting', waiting > 0);
    const active = running + waiting > 0;
    if (active !== this._active) {
      this._active = active;
      this._activeChanged.emit();
    }
  }

  private _active = false;
  private _activeChanged = new Signal<this, void>(this);
}
