/**
 * Every kernel the extension follows, one store per kernel id.
 *
 * The registry follows the sessions of every notebook (and console) the
 * application opens, not only the current one: the status bar counts the tasks
 * of all of them and notifications come from any of them.
 */

import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel } from '@jupyterlab/services';
import { Token } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';

import { signInRoute } from './signin';
import { IStoreChange, ITransition, KernelTaskStore } from './store';

export interface ITaskRegistry {
  /** The stores of the kernels followed now. */
  readonly stores: ReadonlyMap<string, KernelTaskStore>;
  /** Some store's tasks or state changed. */
  readonly changed: ISignal<ITaskRegistry, KernelTaskStore>;
  /** A store was created or disposed. */
  readonly storesChanged: ISignal<ITaskRegistry, void>;
  /** A task some store had seen before changed status (updates only, never snapshots). */
  readonly transition: ISignal<ITaskRegistry, ITransition>;
  /**
   * Follow a kernel connection: the store of its kernel, or null when neither this
   * connection nor another one followed here can carry comms.
   */
  follow(kernel: Kernel.IKernelConnection): KernelTaskStore | null;
  /** Follow whatever kernel a session context has now and later. */
  followSession(context: ISessionContext): void;
}

export const ITaskRegistry = new Token<ITaskRegistry>(
  'mcp-tasks-jupyter:ITaskRegistry',
  'The MCP task stores of the kernels JupyterLab follows.'
);

export class TaskRegistry implements ITaskRegistry {
  get stores(): ReadonlyMap<string, KernelTaskStore> {
    return this._stores;
  }

  get changed(): ISignal<this, KernelTaskStore> {
    return this._changed;
  }

  get storesChanged(): ISignal<this, void> {
    return this._storesChanged;
  }

  get transition(): ISignal<this, ITransition> {
    return this._transition;
  }

  follow(kernel: Kernel.IKernelConnection): KernelTaskStore | null {
    if (kernel.isDisposed) {
      return null;
    }
    if (!kernel.handleComms) {
      // JupyterLab lets only the first connection to a kernel carry comms; it may be another view's.
      return this._stores.get(kernel.id) ?? null;
    }
    let store = this._stores.get(kernel.id);
    if (!store) {
      store = new KernelTaskStore(kernel.id, signInRoute);
      this._stores.set(kernel.id, store);
      store.changed.connect(this._onStoreChanged, this);
      store.transition.connect(this._onTransition, this);
      store.disposed.connect(this._onStoreDisposed, this);
      store.addConnection(kernel);
      this._storesChanged.emit();
    } else {
      store.addConnection(kernel);
    }
    return store;
  }

  followSession(context: ISessionContext): void {
    if (this._contexts.has(context)) {
      return;
    }
    this._contexts.add(context);
    const track = (): void => {
      const kernel = context.session?.kernel;
      if (kernel) {
        this.follow(kernel);
      }
    };
    context.kernelChanged.connect(track);
    context.disposed.connect(() => this._contexts.delete(context));
    track();
  }

  private _onStoreChanged(store: KernelTaskStore, _change: IStoreChange): void {
    this._changed.emit(store);
  }

  private _onTransition(
    _store: KernelTaskStore,
    transition: ITransition
  ): void {
    this._transition.emit(transition);
  }

  private _onStoreDisposed(store: KernelTaskStore): void {
    if (this._stores.get(store.kernelId) === store) {
      this._stores.delete(store.kernelId);
      this._storesChanged.emit();
      this._changed.emit(store);
    }
  }

  private _stores = new Map<string, KernelTaskStore>();
  private _contexts = new Set<ISessionContext>();
  private _changed = new Signal<this, KernelTaskStore>(this);
  private _storesChanged = new Signal<this, void>(this);
  private _transition = new Signal<this, ITransition>(this);
}
