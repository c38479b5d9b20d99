/**
 * Notifications about many tasks stay few: transitions of one kind (completed,
 * failed, cancelled, needs input) that come within `GROUP_WINDOW` of each other
 * make one notification ("12 MCP tasks completed: ..."), and while that one is
 * still fresh (`REUSE_FOR`) later ones of the same kind update it instead of
 * raising another. Pure logic (timers only): `notify.ts` does the showing.
 */

import { type Outcome, describe } from './policy';
import type { ITask } from './protocol';

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
