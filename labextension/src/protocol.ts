/**
 * The comm protocol between a kernel running mcp_tasks_jupyter and this extension.
 *
 * Everything a kernel sends is untrusted (task messages come from MCP servers), so
 * every message is validated here and malformed entries are dropped; nothing
 * else in the extension looks at raw comm data.
 */

import { FAILURES, FINISHED } from './status';

/** The comm target both sides register and either side may open. */
export const COMM_TARGET = 'mcp_tasks_jupyter.tasks';

/** One task (or a call not yet a task) as the kernel describes it. */
export interface ITask {
  readonly key: string;
  readonly taskId: string | null;
  readonly tool: string | null;
  /** The arguments in a few words (`topic=tides depth=2`), "" when there are none. */
  readonly label: string;
  readonly server: string;
  readonly status: string;
  readonly message: string | null;
  /** Epoch seconds. */
  readonly started: number;
  readonly finished: number | null;
  readonly progress: number | null;
  readonly total: number | null;
  /** The id of the cell model whose execution started the task. */
  readonly cellId: string | null;
  readonly needsInput: boolean;
  readonly cached: boolean;
  /** The id of the `client.map` batch that started the task (its tasks are announced together). */
  readonly batch: string | null;
}

export interface ISnapshotMessage {
  readonly type: 'snapshot';
  readonly tasks: ITask[];
}

export interface IUpdateMessage {
  readonly type: 'update';
  /** Whole entries: tasks new to this update's stream. */
  readonly tasks: ITask[];
  /** Tasks held already: their key and only the fields that changed (the kernel's names). */
  readonly changes: ITaskChange[];
  readonly removed: string[];
}

/** `{key, ...fields that changed}` of a task's entry, unvalidated until laid over the task. */
export type ITaskChange = Readonly<Record<string, unknown>> & {
  readonly key: string;
};

export interface ICancelResultMessage {
  readonly type: 'cancel_result';
  readonly key: string;
  readonly ok: boolean;
  readonly error: string | null;
}

/** A message from the kernel, once validated. */
export type KernelMessage =
  ISnapshotMessage | IUpdateMessage | ICancelResultMessage;

/** Messages to the kernel. */
export type FrontEndMessage =
  | { type: 'hello' }
  | { type: 'cancel'; key: string }
  | { type: 'oauth'; callback: string | null };

/** Longest text kept from a kernel string; the rest is cut (a row is not a log). */
const MAX_TEXT = 2000;

/** Statuses of calls or tasks still in flight and not waiting for the user. */
export const RUNNING_STATUSES: ReadonlySet<string> = new Set([
  'submitted',
  'working',
  'starting',
  'running'
]);

/** Statuses after which a task never changes again. */
export const TERMINAL_STATUSES: ReadonlySet<string> = FINISHED;

/** Statuses shown as failures (filter, notifications, colours). */
export const FAILED_STATUSES: ReadonlySet<string> = FAILURES;

/** Whether the task waits for an answer from the user. */
export function isWaiting(task: ITask): boolean {
  return task.status === 'input_required' || task.needsInput;
}

/** Whether the task is still in flight and not waiting for the user. */
export function isRunning(task: ITask): boolean {
  return RUNNING_STATUSES.has(task.status) && !task.needsInput;
}

/** Whether the task is over (a status we do not know is not over). */
export function isTerminal(task: ITask): boolean {
  return TERMINAL_STATUSES.has(task.status);
}

/** Validate one message from the kernel; null if it is not one we understand. */
export function parseKernelMessage(data: unknown): KernelMessage | null {
  if (!isObject(data)) {
    return null;
  }
  switch (data.type) {
    case 'snapshot':
      if (!Array.isArray(data.tasks)) {
        return null;
      }
      return { type: 'snapshot', tasks: parseTasks(data.tasks) };
    case 'update':
      return {
        type: 'update',
        tasks: Array.isArray(data.tasks) ? parseTasks(data.tasks) : [],
        changes: Array.isArray(data.changes)
          ? data.changes.filter(
              (change: unknown): change is ITaskChange =>
                isObject(change) && isNonEmptyString(change.key)
            )
          : [],
        removed: Array.isArray(data.removed)
          ? data.removed.filter(isNonEmptyString)
          : []
      };
    case 'cancel_result':
      if (!isNonEmptyString(data.key)) {
        return null;
      }
      return {
        type: 'cancel_result',
        key: data.key,
        ok: data.ok === true,
        error: optionalText(data.error)
      };
    default:
      return null;
  }
}

/** Validate one task; null if a required field is missing or of the wrong type. */
export function parseTask(raw: unknown): ITask | null {
  if (!isObject(raw)) {
    return null;
  }
  const { key, server, status, started } = raw;
  if (
    !isNonEmptyString(key) ||
    typeof server !== 'string' ||
    !isNonEmptyString(status) ||
    !isFiniteNumber(started)
  ) {
    return null;
  }
  return {
    key,
    taskId: optionalText(raw.task_id),
    tool: optionalText(raw.tool),
    label: optionalText(raw.label) ?? '',
    server: clip(server),
    status: clip(status),
    message: optionalText(raw.message),
    started,
    finished: optionalNumber(raw.finished),
    progress: optionalNumber(raw.progress),
    total: optionalNumber(raw.total),
    cellId: optionalText(raw.cell_id),
    needsInput: raw.needs_input === true,
    cached: raw.cached === true,
    batch: optionalText(raw.batch)
  };
}

/** `task` with `change` laid over it (validated as a whole entry); null if the result is not a task. */
export function applyChange(task: ITask, change: ITaskChange): ITask | null {
  return parseTask({ ...entryOf(task), ...change, key: task.key });
}

/** The kernel's entry `task` was read from (`parseTask`'s inverse, but for the cut texts). */
function entryOf(task: ITask): Record<string, unknown> {
  return {
    key: task.key,
    task_id: task.taskId,
    tool: task.tool,
    label: task.label,
    server: task.server,
    status: task.status,
    message: task.message,
    started: task.started,
    finished: task.finished,
    progress: task.progress,
    total: task.total,
    cell_id: task.cellId,
    needs_input: task.needsInput,
    cached: task.cached,
    batch: task.batch
  };
}

function parseTasks(raw: unknown[]): ITask[] {
  const tasks: ITask[] = [];
  for (const entry of raw) {
    const task = parseTask(entry);
    if (task) {
      tasks.push(task);
    }
  }
  return tasks;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function optionalText(value: unknown): string | null {
  return typeof value === 'string' ? clip(value) : null;
}

function optionalNumber(value: unknown): number | null {
  return isFiniteNumber(value) ? value : null;
}

function clip(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}
