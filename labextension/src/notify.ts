/**
 * Notifications for tasks that end or start waiting for input, by default
 * while their cell is out of sight (the policy is the plugin's settings, see
 * `policy.ts`). Only transitions seen in updates count (never the contents of a
 * snapshot), and each (task, status) is announced once. Many at once are
 * grouped into one notification per kind, updated as more come (`groups.ts`):
 * "12 MCP tasks completed", not 12 toasts; the tasks of one `client.map` batch that end make one
 * notification counting the whole batch, updated until it is over.
 */

import { Notification } from '@jupyterlab/apputils';

import type { CellLocator } from './cells';
import {
  BatchNotifications,
  describeBatch,
  describeGroup,
  NotificationGroups
} from './groups';
import {
  DEFAULT_POLICY,
  type INotifyPolicy,
  type Outcome,
  outcomeOf
} from './policy';
import type { ITask } from './protocol';
import type { ITaskRegistry } from './registry';
import type { ITransition, KernelTaskStore } from './store';

/** How long a success (or cancellation) toast stays, in milliseconds. */
const SUCCESS_CLOSE = 5000;
/** How long a failure toast stays (it stays in the notification centre after). */
const FAILURE_CLOSE = 15000;

const KINDS = {
  completed: 'success',
  cancelled: 'info',
  failed: 'error',
  waiting: 'warning'
} as const satisfies Record<Outcome, string>;

const CLOSE: Record<Outcome, number | false> = {
  completed: SUCCESS_CLOSE,
  cancelled: SUCCESS_CLOSE,
  failed: FAILURE_CLOSE,
  waiting: false
};

export class TaskNotifier {
  constructor(
    registry: ITaskRegistry,
    private readonly _locator: CellLocator
  ) {
    registry.transition.connect((_, transition) =>
      this._onTransition(transition)
    );
  }

  /** Which transitions notify, and when; the settings' defaults until they are loaded. */
  policy: INotifyPolicy = DEFAULT_POLICY;

  private _onTransition({ store, previous, current }: ITransition): void {
    const found = outcomeOf(previous, current, this.policy);
    if (!found) {
      return;
    }
    const { outcome } = found;
    const seen = `${store.kernelId}\u0000${store.generation}\u0000${current.key}\u0000${outcome === 'waiting' ? 'input_required' : current.status}`;
    if (this._seen.has(seen)) {
      return;
    }
    this._seen.add(seen);
    if (
      this.policy.onlyWhenOutOfView &&
      this._locator.isVisible(store.kernelId, current.cellId)
    ) {
      return;
    }
    this._cells.set(current, {
      kernelId: store.kernelId,
      cellId: current.cellId
    });
    if (current.batch !== null && outcome !== 'waiting') {
      const batch = `${store.kernelId}\u0000${store.generation}\u0000${current.batch}`;
      this._batchStores.set(batch, { store, id: current.batch });
      this._batches.add(batch);
      return;
    }
    this._groups.add(outcome, current);
  }

  /** The tasks of one batch as the kernel's store has them now. */
  private _membersOf(batch: string): ITask[] {
    const where = this._batchStores.get(batch);
    if (!where || where.store.isDisposed) {
      return [];
    }
    return [...where.store.tasks.values()].filter(t => t.batch === where.id);
  }

  /** Show (or update) the notification of a batch, counting all its tasks. */
  private _showBatch(
    tasks: readonly ITask[],
    replacing: string | null
  ): string {
    const { message, kind, done } = describeBatch(tasks);
    const ended = tasks.filter(t => this._cells.has(t));
    const last = ended[ended.length - 1] ?? tasks[tasks.length - 1];
    const autoClose = !done
      ? false
      : kind === 'error'
        ? FAILURE_CLOSE
        : SUCCESS_CLOSE;
    const options = this._options(
      last,
      tasks.length,
      'Show the cell that started these tasks',
      { batch: last.batch ?? '' }
    );
    return this._raise(message, kind, autoClose, options, replacing);
  }

  /** Show (or update) the notification of `tasks`, which all had `outcome`. */
  private _show(
    outcome: Outcome,
    tasks: readonly ITask[],
    replacing: string | null
  ): string {
    const options = this._options(
      tasks[tasks.length - 1],
      tasks.length,
      tasks.length === 1
        ? 'Show the cell that started this task'
        : 'Show the cell that started the last of these tasks'
    );
    const message = describeGroup(outcome, tasks);
    return this._raise(
      message,
      KINDS[outcome],
      CLOSE[outcome],
      options,
      replacing
    );
  }

  /** A notification's "Show" action (to `last`'s cell) and the data the tests read. */
  private _options(
    last: ITask,
    count: number,
    caption: string,
    extra: Record<string, string> = {}
  ) {
    const where = this._cells.get(last);
    return {
      actions: [
        {
          label: 'Show',
          caption,
          callback: () => {
            if (where) {
              void this._locator.reveal(where.kernelId, where.cellId);
            }
          }
        }
      ],
      data: {
        kernelId: where?.kernelId ?? '',
        key: last.key,
        status: last.status,
        count,
        ...extra
      }
    };
  }

  /** Update the notification `replacing` if it is still there, else raise a new one; its id. */
  private _raise(
    message: string,
    kind: Notification.TypeOptions,
    autoClose: number | false,
    options: ReturnType<TaskNotifier['_options']>,
    replacing: string | null
  ): string {
    if (
      replacing !== null &&
      Notification.update({
        id: replacing,
        message,
        type: kind,
        autoClose,
        ...options
      })
    ) {
      return replacing;
    }
    return Notification.emit(message, kind, { ...options, autoClose });
  }

  private _batches = new BatchNotifications(
    (tasks, replacing) => this._showBatch(tasks, replacing),
    batch => this._membersOf(batch)
  );
  private _batchStores = new Map<
    string,
    { store: KernelTaskStore; id: string }
  >();
  private _groups = new NotificationGroups((outcome, tasks, replacing) =>
    this._show(outcome, tasks, replacing)
  );
  /** Where each announced task's cell is (for "Show"). */
  private _cells = new WeakMap<
    ITask,
    { kernelId: string; cellId: string | null }
  >();
  private _seen = new Set<string>();
}
