/**
 * Notifications about many tasks stay few: transitions of one kind (completed,
 * failed, cancelled, needs input) that come within `GROUP_WINDOW` of each other
 * make one notification ("12 MCP tasks completed: ..."), and while that one is
 * still fresh (`REUSE_FOR`) later ones of the same kind update it instead of
 * raising another. The tasks of one `client.map` batch make one notification of their own that
 * counts the whole batch ("12 of 50 MCP tasks finished ...", updated until "50 MCP tasks finished
 * on demo (slow_compute): 47 completed, 3 failed"). Pure logic (timers only): `notify.ts` does the
 * showing.
 */

import { type Outcome, describe } from './policy';
import { isTerminal, type ITask } from './protocol';
import { FAILURES, inWords } from './status';

/** Milliseconds: transitions this close together make one notification. */
export const GROUP_WINDOW = 1500;
/** Milliseconds: a notification this recent takes later transitions of its kind in. */
export const REUSE_FOR = 10000;
/** Tasks named in a grouped message; the rest are counted. */
export const NAMED = 3;

/** `research topic=tides`: a task by its tool and its arguments' label. */
export function taskName(task: ITask): string {
  const tool = task.tool ?? task.key;
  return task.label ? `${tool} ${task.label}` : tool;
}

const VERBS: Record<Outcome, [string, string]> = {
  completed: ['completed', 'completed'],
  failed: ['failed', 'failed'],
  cancelled: ['cancelled', 'cancelled'],
  waiting: ['needs input', 'need input']
};

/**
 * One task: `describe` (with its arguments' label). Several: `12 MCP tasks
 * completed on demo: slow_compute label=a, slow_compute label=b, slow_compute
 * label=c and 9 more` (the tool said once when they all share it).
 */
export function describeGroup(
  outcome: Outcome,
  tasks: readonly ITask[]
): string {
  if (tasks.length === 1) {
    return describe(tasks[0], outcome);
  }
  const servers = [...new Set(tasks.map(t => t.server))];
  const tools = [...new Set(tasks.map(t => t.tool ?? t.key))];
  const where = servers.length === 1 ? ` on ${servers[0]}` : '';
  const shared = tools.length === 1 ? ` (${tools[0]})` : '';
  // The words every label shares (`seconds=6 steps=3`) tell the tasks apart no more: left out.
  const words = tasks.map(t => (t.label ? t.label.split(' ') : []));
  const common = new Set(
    words[0].filter(word => words.every(w => w.includes(word)))
  );
  const names = tasks.slice(0, NAMED).map((t, i) => {
    const own = words[i].filter(word => !common.has(word)).join(' ');
    return shared ? own || t.label || (t.tool ?? t.key) : taskName(t);
  });
  const more = tasks.length > NAMED ? ` and ${tasks.length - NAMED} more` : '';
  return `${tasks.length} MCP tasks ${VERBS[outcome][1]}${where}${shared}: ${names.join(', ')}${more}`;
}

/** Shows (or, given the id of a notification still on screen, updates) one notification; its id. */
export type Show = (
  outcome: Outcome,
  tasks: readonly ITask[],
  replacing: string | null
) => string;

interface IShown {
  id: string;
  at: number;
  tasks: ITask[];
}

export class NotificationGroups {
  constructor(
    private readonly _show: Show,
    private readonly _now: () => number = () => Date.now()
  ) {}

  /** Announce `task`'s `outcome` with the others of its kind that come soon. */
  add(outcome: Outcome, task: ITask): void {
    const pending = this._pending.get(outcome) ?? [];
    pending.push(task);
    this._pending.set(outcome, pending);
    if (!this._timers.has(outcome)) {
      this._timers.set(
        outcome,
        setTimeout(() => this.flush(outcome), GROUP_WINDOW)
      );
    }
  }

  /** Show what waits to be announced for `outcome` now. */
  flush(outcome: Outcome): void {
    const timer = this._timers.get(outcome);
    if (timer !== undefined) {
      clearTimeout(timer);
      this._timers.delete(outcome);
    }
    const tasks = this._pending.get(outcome) ?? [];
    this._pending.delete(outcome);
    if (!tasks.length) {
      return;
    }
    const now = this._now();
    const shown = this._shown.get(outcome);
    if (shown && now - shown.at < REUSE_FOR) {
      shown.tasks.push(...tasks);
      shown.at = now;
      shown.id = this._show(outcome, shown.tasks, shown.id);
      return;
    }
    this._shown.set(outcome, {
      id: this._show(outcome, tasks, null),
      at: now,
      tasks: [...tasks]
    });
  }

  dispose(): void {
    for (const timer of this._timers.values()) {
      clearTimeout(timer);
    }
    this._timers.clear();
    this._pending.clear();
  }

  private _pending = new Map<Outcome, ITask[]>();
  private _timers = new Map<Outcome, ReturnType<typeof setTimeout>>();
  private _shown = new Map<Outcome, IShown>();
}

/** How a batch's notification reads now, and its kind. */
export interface IBatchMessage {
  readonly message: string;
  /** `in-progress` while some task runs, then `error` (a failure), `success` or `info` (cancelled only). */
  readonly kind: 'in-progress' | 'error' | 'success' | 'info';
  readonly done: boolean;
}

/**
 * A whole batch in one line: `50 MCP tasks finished on demo (slow_compute): 47 completed, 3
 * failed`, or while it runs `12 of 50 MCP tasks finished on demo (slow_compute): 12 completed (38
 * still running)`. Outcomes are counted in words (`tool error`, `declined`), completed first.
 */
export function describeBatch(tasks: readonly ITask[]): IBatchMessage {
  const servers = [...new Set(tasks.map(t => t.server))];
  const tools = [...new Set(tasks.map(t => t.tool ?? t.key))];
  const where = servers.length === 1 ? ` on ${servers[0]}` : '';
  const shared = tools.length === 1 ? ` (${tools[0]})` : '';
  const ended = tasks.filter(isTerminal);
  const counts = new Map<string, number>();
  for (const task of ended) {
    const word = inWords(task.status);
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const order = [...counts.keys()].sort(
    (a, b) =>
      Number(b === 'completed') - Number(a === 'completed') ||
      (counts.get(b) ?? 0) - (counts.get(a) ?? 0)
  );
  const outcomes = order.map(word => `${counts.get(word)} ${word}`).join(', ');
  const done = ended.length === tasks.length;
  const noun = tasks.length === 1 ? 'MCP task' : 'MCP tasks';
  const head = done
    ? `${tasks.length} ${noun} finished${where}${shared}`
    : `${ended.length} of ${tasks.length} ${noun} finished${where}${shared}`;
  const body = outcomes ? `: ${outcomes}` : '';
  const rest = done ? '' : ` (${tasks.length - ended.length} still running)`;
  let kind: IBatchMessage['kind'] = 'in-progress';
  if (done) {
    if (ended.some(t => FAILURES.has(t.status))) {
      kind = 'error';
    } else if (ended.some(t => t.status === 'completed')) {
      kind = 'success';
    } else {
      kind = 'info';
    }
  }
  return { message: `${head}${body}${rest}`, kind, done };
}

/** Shows (or updates, given the id of the one on screen) a batch's notification; its id. */
export type ShowBatch = (
  tasks: readonly ITask[],
  replacing: string | null
) => string;

/**
 * One notification per batch: a task of the batch that ends (`add`) has the batch's notification
 * shown, or updated, within `GROUP_WINDOW`, counting every task of the batch as `members` has them
 * then; once all have ended the notification is final and a later `add` starts none.
 */
export class BatchNotifications {
  constructor(
    private readonly _show: ShowBatch,
    private readonly _members: (batch: string) => readonly ITask[]
  ) {}

  /** A task of `batch` ended: announce the batch soon. */
  add(batch: string): void {
    if (this._finished.has(batch) || this._timers.has(batch)) {
      return;
    }
    this._timers.set(
      batch,
      setTimeout(() => this.flush(batch), GROUP_WINDOW)
    );
  }

  /** Show `batch` as it is now. */
  flush(batch: string): void {
    const timer = this._timers.get(batch);
    if (timer !== undefined) {
      clearTimeout(timer);
      this._timers.delete(batch);
    }
    const tasks = this._members(batch);
    if (!tasks.length || this._finished.has(batch)) {
      return;
    }
    const id = this._show(tasks, this._shown.get(batch) ?? null);
    if (tasks.every(isTerminal)) {
      this._shown.delete(batch);
      this._finished.add(batch);
    } else {
      this._shown.set(batch, id);
    }
  }

  dispose(): void {
    for (const timer of this._timers.values()) {
      clearTimeout(timer);
    }
    this._timers.clear();
  }

  private _timers = new Map<string, ReturnType<typeof setTimeout>>();
  private _shown = new Map<string, string>();
  private _finished = new Set<string>();
}
