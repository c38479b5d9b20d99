/**
 * Notifications for tasks that end or start waiting for input, by default
 * while their cell is out of sight (the policy is the plugin's settings, see
 * `policy.ts`). Only transitions seen in updates count (never the contents of a
 * snapshot), and each (task, status) is announced once.
 */

import { Notification } from '@jupyterlab/apputils';

import type { CellLocator } from './cells';
import {
  DEFAULT_POLICY,
  describe,
  type INotifyPolicy,
  outcomeOf
} from './policy';
import type { ITaskRegistry } from './registry';
import type { ITransition } from './store';

/** How long a success (or cancellation) toast stays, in milliseconds. */
const SUCCESS_CLOSE = 5000;
/** How long a failure toast stays (it stays in the notification centre after). */
const FAILURE_CLOSE = 15000;

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
      case 'cancelled':
        Notification.info(message, { ...options, autoClose: SUCCESS_CLOSE });
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
