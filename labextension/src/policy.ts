/**
 * Which task transitions raise a notification, and when: the settings of the
 * `mcp-tasks-jupyter:notifications` plugin (`schema/notifications.json`),
 * validated here. Pure logic, no JupyterLab.
 */

import { type ITask, isTerminal, isWaiting } from './protocol';
import { FAILURES, inWords } from './status';

/** The statuses a notification can be about; `input_required` also means "needs input". */
export const NOTIFY_STATUSES = [
  'completed',
  'error',
  'declined',
  'failed',
  'lost',
  'expired',
  'unknown',
  'cancelled',
  'input_required'
] as const;

export type NotifyStatus = (typeof NOTIFY_STATUSES)[number];

export interface INotifyPolicy {
  /** The statuses that notify. */
  readonly statuses: ReadonlySet<NotifyStatus>;
  /** Notify only when the task's cell is out of view (else always). */
  readonly onlyWhenOutOfView: boolean;
}

/** The defaults of the schema: ends and questions, out of view only. */
export const DEFAULT_POLICY: INotifyPolicy = {
  statuses: new Set<NotifyStatus>([
    'completed',
    'error',
    'declined',
    'failed',
    'lost',
    'expired',
    'input_required'
  ]),
  onlyWhenOutOfView: true
};

/** What a notification announces (and so its kind: success, error, info, warning). */
export type Outcome = 'completed' | 'failed' | 'cancelled' | 'waiting';

/**
 * The policy in a plugin's composite settings; a missing or malformed value is
 * its default (JupyterLab validates against the schema, but a settings file
 * edited by hand may still say anything).
 */
export function readPolicy(composite: unknown): INotifyPolicy {
  const settings =
    typeof composite === 'object' && composite !== null
      ? (composite as Record<string, unknown>)
      : {};
  const statuses = Array.isArray(settings.statuses)
    ? new Set(settings.statuses.filter(isNotifyStatus))
    : DEFAULT_POLICY.statuses;
  const onlyWhenOutOfView =
    typeof settings.onlyWhenOutOfView === 'boolean'
      ? settings.onlyWhenOutOfView
      : DEFAULT_POLICY.onlyWhenOutOfView;
  return { statuses, onlyWhenOutOfView };
}

function isNotifyStatus(value: unknown): value is NotifyStatus {
  return (NOTIFY_STATUSES as readonly unknown[]).includes(value);
}

/**
 * What the transition from `previous` to `current` announces under `policy`,
 * with the status it is about; null for nothing. A task that was already over
 * announces nothing more.
 */
export function outcomeOf(
  previous: ITask,
  current: ITask,
  policy: INotifyPolicy
): { outcome: Outcome; status: NotifyStatus } | null {
  if (isTerminal(previous)) {
    return null;
  }
  let found: { outcome: Outcome; status: NotifyStatus } | null = null;
  if (current.status === 'completed') {
    found = { outcome: 'completed', status: 'completed' };
  } else if (FAILURES.has(current.status)) {
    found = { outcome: 'failed', status: current.status as NotifyStatus };
  } else if (current.status === 'cancelled') {
    found = { outcome: 'cancelled', status: 'cancelled' };
  } else if (isWaiting(current) && !isWaiting(previous)) {
    found = { outcome: 'waiting', status: 'input_required' };
  }
  return found && policy.statuses.has(found.status) ? found : null;
}

/** `MCP task "research topic=tides" on demo completed`, plus the message of a failure. */
export function describe(task: ITask, outcome: Outcome): string {
  const tool = task.tool ?? '';
  const name = tool
    ? `"${task.label ? `${tool} ${task.label}` : tool}"`
    : task.key;
  const head = `MCP task ${name} on ${task.server}`;
  switch (outcome) {
    case 'completed':
      return `${head} completed`;
    case 'cancelled':
      return `${head} cancelled`;
    case 'failed':
      return task.message
        ? `${head} ${inWords(task.status)}: ${task.message}`
        : `${head} ${inWords(task.status)}`;
    case 'waiting':
      return `${head} needs input`;
  }
}
