/**
 * The kernel's task store against a stand-in kernel connection: the few
 * methods of `Kernel.IKernelConnection` the store uses, with comms that record
 * what the store sends and let the test deliver what the kernel would.
 */

import type { Kernel } from '@jupyterlab/services';
import { describe, expect, it } from 'vitest';

import { COMM_TARGET } from '../src/protocol';
import {
  type IStoreChange,
  type ITransition,
  KernelTaskStore
} from '../src/store';
import { FakeKernel } from './fake-kernel';

function task(
  key: string,
  patch: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    key,
    server: 'demo',
    status: 'working',
    started: 100,
    tool: 'research',
    ...patch
  };
}

/** The `hello`s among what the store sent. */
function hellos(sent: unknown[]): unknown[] {
  return sent.filter(m => (m as { type?: string }).type === 'hello');
}

function setUp(status: Kernel.Status = 'idle'): {
  store: KernelTaskStore;
  kernel: FakeKernel;
  changes: IStoreChange[];
  transitions: ITransition[];
} {
  const kernel = new FakeKernel('k1', status);
  const store = new KernelTaskStore('k1');
  const changes: IStoreChange[] = [];
  const transitions: ITransition[] = [];
  store.changed.connect((_, change) => changes.push(change));
  store.transition.connect((_, transition) => transitions.push(transition));
  store.addConnection(kernel.connection);
  return { store, kernel, changes, transitions };
}

describe('KernelTaskStore', () => {
  it('says hello on an idle kernel and loads the snapshot it gets', () => {
    const { store, kernel, changes } = setUp();
    expect(kernel.targets.has(COMM_TARGET)).toBe(true);
    expect(kernel.last.targetName).toBe(COMM_TARGET);
    expect(kernel.last.opened).toEqual([{ type: 'hello' }]);
    expect(store.state).toBe('connecting');
    kernel.last.receive({
      type: 'snapshot',
      tasks: [
        task('a'),
        task('b', { needs_input: true }),
        task('q', { status: 'queued' })
      ]
    });
    expect(store.state).toBe('loaded');
    expect([...store.tasks.keys()]).toEqual(['a', 'b', 'q']);
    expect(store.counts).toEqual({ running: 1, waiting: 1, queued: 1 });
    expect(changes[changes.length - 1].reset).toBe(true);
  });

  it('waits for a starting kernel before saying hello', () => {
    const { kernel } = setUp('starting');
    expect(kernel.comms).toHaveLength(0);
    kernel.setStatus('idle');
    expect(kernel.comms).toHaveLength(1);
    kernel.setStatus('busy');
    expect(kernel.comms).toHaveLength(1);
  });

  it('applies updates, and reports transitions of tasks seen before only', () => {
    const { store, kernel, changes, transitions } = setUp();
    kernel.last.receive({ type: 'snapshot', tasks: [task('a'), task('gone')] });
    kernel.last.receive({
      type: 'update',
      tasks: [
        task('a', { status: 'completed', finished: 105 }),
        task('new', { status: 'failed' })
      ],
      removed: ['gone']
    });
    expect(changes[changes.length - 1]).toEqual({
      reset: false,
      changed: ['a', 'new'],
      removed: ['gone']
    });
    expect([...store.tasks.keys()]).toEqual(['a', 'new']);
    expect(transitions).toHaveLength(1);
    expect(transitions[0].previous.status).toBe('working');
    expect(transitions[0].current.status).toBe('completed');
    expect(transitions[0].store).toBe(store);
    // needing input is a transition too
    kernel.last.receive({
      type: 'update',
      tasks: [task('new', { status: 'failed', needs_input: true })]
    });
    expect(transitions).toHaveLength(2);
    expect(store.counts).toEqual({ running: 0, waiting: 1, queued: 0 });
  });

  it('lays changes over the tasks it holds, and asks again for all when one is unknown', () => {
    const { store, kernel, changes, transitions } = setUp();
    const comm = kernel.last;
    comm.receive({
      type: 'snapshot',
      tasks: [task('a', { label: 'topic=tides', progress: 1, total: 10 })]
    });
    comm.receive({
      type: 'update',
      tasks: [task('b')],
      changes: [{ key: 'a', progress: 2, message: 'step 2' }],
      removed: []
    });
    const a = store.tasks.get('a');
    expect([a?.label, a?.progress, a?.total, a?.message, a?.tool]).toEqual([
      'topic=tides',
      2,
      10,
      'step 2',
      'research'
    ]);
    expect(changes[changes.length - 1].changed).toEqual(['b', 'a']);
    comm.receive({
      type: 'update',
      tasks: [],
      changes: [{ key: 'a', status: 'completed', finished: 105 }]
    });
    expect(transitions.map(t => t.current.status)).toEqual(['completed']);
    expect(store.tasks.get('a')?.label).toBe('topic=tides');
    // a change that would make the task unreadable is dropped; one about an unknown task means an
    // update went missing: the store asks for a snapshot
    comm.receive({
      type: 'update',
      tasks: [],
      changes: [{ key: 'a', started: 'soon' }, { status: 'x' }, 'junk']
    });
    expect(store.tasks.get('a')?.started).toBe(100);
    expect(hellos(comm.sent)).toHaveLength(0);
    comm.receive({
      type: 'update',
      tasks: [],
      changes: [{ key: 'zz', progress: 3 }]
    });
    expect(hellos(comm.sent)).toHaveLength(1);
    expect(store.tasks.has('zz')).toBe(false);
  });

  it('drops what it cannot read', () => {
    const { store, kernel, changes } = setUp();
    kernel.last.receive({ type: 'snapshot', tasks: [task('a')] });
    const before = changes.length;
    for (const junk of [
      null,
      'x',
      [],
      { type: 'nope' },
      { type: 'snapshot', tasks: 'x' },
      { type: 'cancel_result' }
    ]) {
      kernel.last.receive(junk);
    }
    expect(changes.length).toBe(before);
    kernel.last.receive({
      type: 'update',
      tasks: [
        task('b', { started: 'soon' }),
        { key: 'c' },
        task('d', { message: 'x'.repeat(5000) })
      ]
    });
    expect([...store.tasks.keys()]).toEqual(['a', 'd']);
    expect(store.tasks.get('d')?.message?.length).toBe(2001); // cut, with an ellipsis
  });

  it('sends Cancel and keeps what the kernel answered', () => {
    const { store, kernel } = setUp();
    const comm = kernel.last;
    comm.receive({ type: 'snapshot', tasks: [task('a'), task('b')] });
    store.cancel('a');
    store.cancel('b');
    expect(comm.sent).toEqual([
      { type: 'cancel', key: 'a' },
      { type: 'cancel', key: 'b' }
    ]);
    expect(store.isCancelPending('a')).toBe(true);
    comm.receive({
      type: 'cancel_result',
      key: 'a',
      ok: false,
      error: 'the server refused'
    });
    expect(store.isCancelPending('a')).toBe(false);
    expect(store.cancelError('a')).toBe('the server refused');
    comm.receive({ type: 'cancel_result', key: 'b', ok: false });
    expect(store.cancelError('b')).toBe(
      'The kernel could not cancel this task'
    );
    comm.receive({
      type: 'update',
      tasks: [task('b', { status: 'cancelled' })]
    });
    expect(store.isCancelPending('b')).toBe(false);
  });

  it('says so when Cancel cannot reach the kernel', () => {
    const { store, kernel } = setUp();
    kernel.last.receive({ type: 'snapshot', tasks: [task('a')] });
    kernel.last.closeFromKernel();
    store.cancel('a');
    expect(store.cancelError('a')).toBe('Not connected to the kernel');
  });

  it('is not-loaded when the kernel closes its comm (no library there)', () => {
    const { store, kernel } = setUp();
    kernel.last.closeFromKernel();
    expect(store.state).toBe('not-loaded');
  });

  it('adopts the comm a kernel opens once the library starts there', () => {
    const { store, kernel } = setUp();
    kernel.last.closeFromKernel();
    const comm = kernel.openFromKernel({
      type: 'snapshot',
      tasks: [task('a')]
    });
    expect(store.state).toBe('loaded');
    comm.receive({
      type: 'update',
      tasks: [task('a', { status: 'completed' })]
    });
    expect(store.tasks.get('a')?.status).toBe('completed');
  });

  it('listens to one comm only, closing the others', () => {
    const { store, kernel } = setUp();
    const own = kernel.last;
    const theirs = kernel.openFromKernel({
      type: 'snapshot',
      tasks: [task('a')]
    });
    expect(own.closed).toBe(true);
    own.receive({ type: 'update', tasks: [task('x')] });
    expect(store.tasks.has('x')).toBe(false);
    theirs.receive({ type: 'update', tasks: [task('y')] });
    expect(store.tasks.has('y')).toBe(true);
  });

  it('starts over when the kernel restarts, in a new generation', () => {
    const { store, kernel } = setUp();
    kernel.last.receive({ type: 'snapshot', tasks: [task('a')] });
    const generation = store.generation;
    kernel.setStatus('restarting');
    expect(store.state).toBe('connecting');
    expect(store.tasks.size).toBe(0);
    expect(store.generation).toBeGreaterThan(generation);
    kernel.setStatus('idle');
    expect(kernel.comms).toHaveLength(2);
    expect(kernel.last.opened).toEqual([{ type: 'hello' }]);
    kernel.setStatus('dead');
    expect(store.state).toBe('dead');
  });

  it('hands over to the next connection when the primary goes away', () => {
    const { store, kernel } = setUp();
    const second = new FakeKernel('k1');
    store.addConnection(second.connection);
    expect(second.comms).toHaveLength(0); // only the primary says hello
    kernel.last.receive({ type: 'snapshot', tasks: [task('a')] });
    // the secondary's comm (opened by the kernel) is ignored while it is not primary
    second.openFromKernel({ type: 'snapshot', tasks: [task('other')] });
    expect([...store.tasks.keys()]).toEqual(['a']);
    kernel.dispose();
    expect(store.isDisposed).toBe(false);
    expect(second.last.opened).toEqual([{ type: 'hello' }]);
    second.last.receive({ type: 'snapshot', tasks: [task('b')] });
    expect([...store.tasks.keys()]).toEqual(['b']);
    let disposed = false;
    store.disposed.connect(() => (disposed = true));
    second.dispose();
    expect(store.isDisposed).toBe(true);
    expect(disposed).toBe(true);
  });
});
