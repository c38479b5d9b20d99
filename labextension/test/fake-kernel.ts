/**
 * A stand-in kernel connection: the few methods of `Kernel.IKernelConnection`
 * the task store uses, with comms that record what the store sends and let a
 * test deliver what the kernel would.
 */

import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import { COMM_TARGET } from '../src/protocol';

export class FakeComm {
  constructor(
    readonly targetName: string,
    readonly commId: string
  ) {}

  isDisposed = false;
  opened: unknown[] = [];
  sent: unknown[] = [];
  closed = false;
  onMsg: ((msg: { content: { data: unknown } }) => void) | null = null;
  onClose: (() => void) | null = null;

  open(data: unknown): { done: Promise<void> } {
    this.opened.push(data);
    return { done: Promise.resolve() };
  }

  send(data: unknown): { done: Promise<void> } {
    this.sent.push(data);
    return { done: Promise.resolve() };
  }

  close(): void {
    this.closed = true;
    this.isDisposed = true;
  }

  /** A message from the kernel on this comm. */
  receive(data: unknown): void {
    this.onMsg?.({ content: { data } });
  }

  /** The kernel closed this comm. */
  closeFromKernel(): void {
    this.isDisposed = true;
    this.onClose?.();
  }
}

let ids = 0;

export class FakeKernel {
  constructor(
    readonly id = 'k1',
    public status: Kernel.Status = 'idle'
  ) {}

  /** The first connection to a kernel carries its comms (the registry follows only those). */
  readonly handleComms = true;
  readonly statusChanged = new Signal<this, Kernel.Status>(this);
  readonly disposed = new Signal<this, void>(this);
  readonly comms: FakeComm[] = [];
  readonly targets = new Map<string, (comm: FakeComm, msg: unknown) => void>();

  registerCommTarget(
    name: string,
    callback: (comm: FakeComm, msg: unknown) => void
  ): void {
    this.targets.set(name, callback);
  }

  createComm(target: string): FakeComm {
    const comm = new FakeComm(target, `c${++ids}`);
    this.comms.push(comm);
    return comm;
  }

  setStatus(status: Kernel.Status): void {
    this.status = status;
    this.statusChanged.emit(status);
  }

  /** The library in the kernel opens a comm of its own (it started after the store said hello). */
  openFromKernel(data: unknown): FakeComm {
    const comm = new FakeComm(COMM_TARGET, `k${++ids}`);
    const msg = { content: { data } } as unknown as KernelMessage.ICommOpenMsg;
    this.targets.get(COMM_TARGET)?.(comm, msg);
    return comm;
  }

  dispose(): void {
    this.disposed.emit();
  }

  /** The comm the store opened last. */
  get last(): FakeComm {
    return this.comms[this.comms.length - 1];
  }

  get connection(): Kernel.IKernelConnection {
    return this as unknown as Kernel.IKernelConnection;
  }
}
