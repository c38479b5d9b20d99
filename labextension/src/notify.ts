/**
 * Notifications for tasks that end or start waiting for input while their cell
 * is out of sight. Only transitions seen in updates count (never the contents
 * of a snapshot), and each (task, status) is announced once.
 */

import { Notification } from '@jupyterlab/apputils';

import type { CellLocator } from './cells';
import { ITask, isTerminal, isWaiting } from './protocol';
import type { ITaskRegistry } from './registry';
import type { ITransition } from './store';

/** How long a success toast stays, in milliseconds. */
const SUCCESS_CLOSE = 5000;
/** How long a failure toast stays (it stays in the notification centre after). */
const FAILURE_CLOSE = 15000;

/** What a transition announces, if anything. */
type Outcome = 'completed' | 'failed' | 'waiting';

const FAILURES: ReadonlySet<string> = new Set(['failed', 'lost', 'expired']);

export class TaskNotifier {
  constructor(
    registry: ITaskRegistry,
    private readonly _locator: CellLocator
  ) {
    registry.transition.connect((_, transition) =>
      this._onTransition(transition)
    );
  }

  private _onTransition({ store, previous, current }: ITransition): void {
    const outcome = outcomeOf(previous, current);
    if (!outcome) {
      return;
    }
    const seen = `${store.kernelId}\u0000${store.generation}\u0000${current.key}\u0000${outcome === 'waiting' ? 'input_required' : current.status}`;
    if (this._seen.has(seen)) {
      return;
    }
    this._seen.add(seen);
    if (this._locator.isVisible(store.kernelId, current.cellId)) {
      return;
    }
    const kernelId = store.kernelId;
    const cellId = current.cellId;
    const options = {
      actions: [
        {
          label: 'Show',
          caption: 'Show the cell that started this task',
          callback: () => {
            void this._locator.reveal(kernelId, cellId);
          }
        }
      ],
      data: { kernelId, key: current.key, status: current.status }
    };
    const message = describe(current, outcome);
    switch (outcome) {
      case 'completed':
        Notification.success(message, { ...options, autoClose: SUCCESS_CLOSE });
        break;
      case 'failed':
        Notification.error(message, { ...options, autoClose: FAILURE_CLOSE });
        break;
      case 'waiting':
        Notification.warning(message, { ...options, autoClose: false });
        break;
    }
  }

  private _seen = new Set<string>();
}

function outcomeOf(previous: ITask, current: ITask): Outcome | null {
  if (isTerminal(previous)) {
    return null;
  }
  if (current.status === 'completed') {
    return 'completed';
  }
  if (FAILURES.has(current.status)) {
    return 'failed';
  }
  if (isWaiting(current) && !isWaiting(previous)) {
    return 'waiting';
  }
  return null;
}

/** `MCP task "research" on demo completed`, plus the message of a failure. */
function describe(task: ITask, outcome: Outcome): string {
  const name = task.tool ? `"${task.tool}"` : task.key;
  const head = `MCP task ${name} on ${task.server}`;
  switch (outcome) {
    case 'completed':
      return `${head} completed`;
    case 'failed':
      return task.message
        ? `${head} ${task.status}: ${task.message}`
        : `${head} ${task.status}`;
    case 'waiting':
      return `${head} needs input`;
  }
}
