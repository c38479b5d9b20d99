/**
 * The tasks of one kernel, kept in sync over the `mcp_tasks_jupyter.tasks` comm.
 *
 * One store per kernel id. JupyterLab lets only the first connection to a kernel
 * handle comms, but a connection may be created with comms on explicitly; each
 * such connection registers the comm target (one without it would close the
 * comm the kernel opens), and only the primary connection's comm feeds the
 * store. When the primary goes away the next one takes over and asks the
 * kernel for a fresh snapshot.
 */

import type {
  Kernel,
  KernelMessage as JupyterMessage
} from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  applyChange,
  COMM_TARGET,
  FrontEndMessage,
  ITask,
  type ITaskChange,
  isRunning,
  isWaiting,
  parseKernelMessage
} from './protocol';
import { noSignInRoute } from './signin';

/**
 * - `connecting`: asked the kernel, no answer yet (also while it restarts);
 * - `loaded`: the library answered, `tasks` is its list;
 * - `not-loaded`: the kernel has no such comm target (library not loaded);
 * - `dead`: the kernel died.
 */
export type StoreState = 'connecting' | 'loaded' | 'not-loaded' | 'dead';

/** What changed in a store; `reset` means "everything, re-read it all". */
export interface IStoreChange {
  readonly reset: boolean;
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

/** A task seen before that an update changed. Never emitted for snapshots. */
export interface ITransition {
  readonly store: KernelTaskStore;
  readonly previous: ITask;
  readonly current: ITask;
}

export interface ICounts {
  readonly running: number;
  readonly waiting: number;
  /** Tasks of a fan-out not sent yet (`queued`): neither running nor waiting for input. */
  readonly queued: number;
}

const RESET: IStoreChange = { reset: true, changed: [], removed: [] };

export class KernelTaskStore implements IDisposable {
  /**
   * `route` gives the address of the Jupyter server's sign-in route (null:
   * none), told to the kernel on every comm (`signin.ts`).
   */
  constructor(
    readonly kernelId: string,
    private readonly _route: () => Promise<string | null> = noSignInRoute
  ) {}

  get state(): StoreState {
    return this._state;
  }

  get tasks(): ReadonlyMap<string, ITask> {
    return this._tasks;
  }

  /**
   * Bumped whenever the task list is thrown away (restart, library reloaded):
   * keys of a new kernel process may repeat those of the old one.
   */
  get generation(): number {
    return this._generation;
  }

  get changed(): ISignal<this, IStoreChange> {
    return this._changed;
  }

  get transition(): ISignal<this, ITransition> {
    return this._transition;
  }

  get disposed(): ISignal<this, void> {
    return this._disposed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Running, waiting and queued tasks, cached until the next change. */
  get counts(): ICounts {
    if (!this._counts) {
      let running = 0;
      let waiting = 0;
      let queued = 0;
      for (const task of this._tasks.values()) {
        if (isWaiting(task)) {
          waiting++;
        } else if (isRunning(task)) {
          running++;
        } else if (task.status === 'queued') {
          queued++;
        }
      }
      this._counts = { running, waiting, queued };
    }
    return this._counts;
  }

  isCancelPending(key: string): boolean {
    return this._cancelPending.has(key);
  }

  cancelError(key: string): string | undefined {
    return this._cancelErrors.get(key);
  }

  /** Follow one more connection to this store's kernel. */
  addConnection(kernel: Kernel.IKernelConnection): void {
    if (this._isDisposed || this._connections.includes(kernel)) {
      return;
    }
    this._connections.push(kernel);
    kernel.registerCommTarget(COMM_TARGET, (comm, msg) =>
      this._onKernelComm(kernel, comm, msg)
    );
    kernel.statusChanged.connect(this._onStatus, this);
    kernel.disposed.connect(this._onConnectionDisposed, this);
    if (this._connections.length === 1) {
      this._connect();
    }
  }

  /** Ask the kernel to cancel a task; the answer comes as cancel_result or update. */
  cancel(key: string): void {
    const comm = this._comm;
    this._cancelErrors.delete(key);
    if (!comm || comm.isDisposed) {
      this._cancelErrors.set(key, 'Not connected to the kernel');
    } else {
      this._cancelPending.add(key);
      this._send(comm, { type: 'cancel', key });
    }
    this._emit({ reset: false, changed: [key], removed: [] });
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    for (const kernel of this._connections) {
      kernel.statusChanged.disconnect(this._onStatus, this);
      kernel.disposed.disconnect(this._onConnectionDisposed, this);
    }
    this._connections = [];
    this._dropComms();
    this._tasks.clear();
    this._disposed.emit();
    Signal.clearData(this);
  }

  private get _primary(): Kernel.IKernelConnection | undefined {
    return this._connections[0];
  }

  /** Start over on the primary connection: forget everything, say hello when it is up. */
  private _connect(): void {
    this._reset('connecting');
    const kernel = this._primary;
    if (kernel && (kernel.status === 'idle' || kernel.status === 'busy')) {
      this._hello(kernel);
    } else {
      this._needsHello = true;
    }
  }

  /** Open our own comm; the library answers with a snapshot, a kernel without it closes the comm. */
  private _hello(kernel: Kernel.IKernelConnection): void {
    this._needsHello = false;
    let comm: Kernel.IComm;
    try {
      comm = kernel.createComm(COMM_TARGET);
    } catch (reason) {
      console.warn('mcp-tasks-jupyter: cannot open a comm', reason);
      this._setState('not-loaded');
      return;
    }
    this._adopt(comm);
    try {
      const data: FrontEndMessage = { type: 'hello' };
      const future = comm.open(data);
      future.done.catch(() => undefined);
    } catch {
      this._forget(comm);
      this._setState('not-loaded');
    }
  }

  /** The kernel opened a comm: the library just started there. */
  private _onKernelComm(
    kernel: Kernel.IKernelConnection,
    comm: Kernel.IComm,
    msg: JupyterMessage.ICommOpenMsg
  ): void {
    if (this._isDisposed || kernel !== this._primary) {
      // Keep it open (closing it would close it for the kernel too) but ignore it.
      return;
    }
    this._adopt(comm);
    this._onData(comm, msg.content.data);
  }

  private _adopt(comm: Kernel.IComm): void {
    this._comms.add(comm);
    comm.onMsg = msg => this._onData(comm, msg.content.data);
    comm.onClose = () => this._onCommClosed(comm);
    void this._route().then(callback => {
      if (this._comms.has(comm) && !comm.isDisposed) {
        this._send(comm, { type: 'oauth', callback });
      }
    });
  }

  /** Stop listening to a comm without closing it. */
  private _forget(comm: Kernel.IComm): void {
    this._comms.delete(comm);
    if (this._comm === comm) {
      this._comm = null;
    }
  }

  private _onCommClosed(comm: Kernel.IComm): void {
    if (!this._comms.has(comm)) {
      return;
    }
    this._forget(comm);
    if (this._comms.size === 0 && this._state !== 'dead') {
      this._reset('not-loaded');
    } else if (!this._comm) {
      // Another comm is still open: ask it for the full list.
      const next = this._comms.values().next().value;
      if (next) {
        this._send(next, { type: 'hello' });
      }
    }
  }

  private _onData(comm: Kernel.IComm, data: unknown): void {
    if (this._isDisposed || !this._comms.has(comm)) {
      return;
    }
    const msg = parseKernelMessage(data);
    if (!msg) {
      return;
    }
    switch (msg.type) {
      case 'snapshot':
        this._useOnly(comm);
        this._applySnapshot(msg.tasks);
        break;
      case 'update':
        if (!this._comm) {
          this._useOnly(comm);
        }
        if (comm === this._comm) {
          this._applyUpdate(msg.tasks, msg.changes, msg.removed);
        }
        break;
      case 'cancel_result':
        this._cancelPending.delete(msg.key);
        if (msg.ok) {
          this._cancelErrors.delete(msg.key);
        } else {
          this._cancelErrors.set(
            msg.key,
            msg.error ?? 'The kernel could not cancel this task'
          );
        }
        this._emit({ reset: false, changed: [msg.key], removed: [] });
        break;
    }
  }

  /** Make `comm` the one we listen to and close the others (the kernel would send everything twice). */
  private _useOnly(comm: Kernel.IComm): void {
    this._comm = comm;
    for (const other of [...this._comms]) {
      if (other !== comm) {
        this._forget(other);
        if (!other.isDisposed) {
          try {
            other.close();
          } catch {
            // Already gone with its kernel.
          }
        }
      }
    }
  }

  private _applySnapshot(tasks: ITask[]): void {
    this._tasks = new Map(tasks.map(task => [task.key, task]));
    for (const key of [...this._cancelPending]) {
      if (!this._tasks.has(key)) {
        this._cancelPending.delete(key);
      }
    }
    for (const key of [...this._cancelErrors.keys()]) {
      if (!this._tasks.has(key)) {
        this._cancelErrors.delete(key);
      }
    }
    this._state = 'loaded';
    this._emit(RESET);
  }

  private _applyUpdate(
    whole: ITask[],
    changes: ITaskChange[],
    removed: string[]
  ): void {
    const tasks = [...whole];
    let missed = false;
    for (const change of changes) {
      const previous = this._tasks.get(change.key);
      const task = previous ? applyChange(previous, change) : null;
      if (task) {
        tasks.push(task);
      } else if (!previous) {
        missed = true;
      }
    }
    if (missed && this._comm) {
      // A change to a task never heard of: an update went missing (a dropped connection); the
      // kernel's snapshot brings every task whole again.
      this._send(this._comm, { type: 'hello' });
    }
    const transitions: ITransition[] = [];
    for (const task of tasks) {
      const previous = this._tasks.get(task.key);
      this._tasks.set(task.key, task);
      this._cancelPending.delete(task.key);
      if (
        previous &&
        (previous.status !== task.status ||
          previous.needsInput !== task.needsInput)
      ) {
        transitions.push({ store: this, previous, current: task });
      }
    }
    for (const key of removed) {
      this._tasks.delete(key);
      this._cancelPending.delete(key);
      this._cancelErrors.delete(key);
    }
    const wasLoaded = this._state === 'loaded';
    this._state = 'loaded';
    this._emit(
      wasLoaded
        ? { reset: false, changed: tasks.map(task => task.key), removed }
        : RESET
    );
    for (const transition of transitions) {
      this._transition.emit(transition);
    }
  }

  private _onStatus(
    kernel: Kernel.IKernelConnection,
    status: Kernel.Status
  ): void {
    if (kernel !== this._primary) {
      return;
    }
    switch (status) {
      case 'restarting':
      case 'autorestarting':
        // The kernel dropped its comms (and the library) with its process.
        this._dropComms();
        this._reset('connecting');
        this._needsHello = true;
        break;
      case 'dead':
        this._dropComms();
        this._reset('dead');
        this._needsHello = true;
        break;
      case 'idle':
      case 'busy':
        if (this._needsHello) {
          this._hello(kernel);
        }
        break;
    }
  }

  private _onConnectionDisposed(kernel: Kernel.IKernelConnection): void {
    const wasPrimary = kernel === this._primary;
    this._connections = this._connections.filter(k => k !== kernel);
    if (this._connections.length === 0) {
      this.dispose();
    } else if (wasPrimary) {
      this._dropComms();
      this._connect();
    }
  }

  private _dropComms(): void {
    this._comms.clear();
    this._comm = null;
  }

  private _reset(state: StoreState): void {
    this._generation++;
    this._tasks = new Map();
    this._cancelPending.clear();
    this._cancelErrors.clear();
    this._state = state;
    this._emit(RESET);
  }

  private _setState(state: StoreState): void {
    if (this._state !== state) {
      this._state = state;
      this._emit({ reset: false, changed: [], removed: [] });
    }
  }

  private _send(comm: Kernel.IComm, data: FrontEndMessage): void {
    try {
      comm.send(data).done.catch(() => undefined);
    } catch (reason) {
      console.warn('mcp-tasks-jupyter: cannot send on the comm', reason);
    }
  }

  private _emit(change: IStoreChange): void {
    this._counts = null;
    this._changed.emit(change);
  }

  private _state: StoreState = 'connecting';
  private _tasks = new Map<string, ITask>();
  private _generation = 0;
  private _counts: ICounts | null = null;
  private _connections: Kernel.IKernelConnection[] = [];
  private _comms = new Set<Kernel.IComm>();
  private _comm: Kernel.IComm | null = null;
  private _needsHello = false;
  private _cancelPending = new Set<string>();
  private _cancelErrors = new Map<string, string>();
  private _isDisposed = false;
  private _changed = new Signal<this, IStoreChange>(this);
  private _transition = new Signal<this, ITransition>(this);
  private _disposed = new Signal<this, void>(this);
}
