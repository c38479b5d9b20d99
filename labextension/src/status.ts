/**
 * The one status vocabulary of a task, twin of `mcp_tasks_jupyter/status.py`
 * (tests/test_status_vocabulary.py keeps the two equal).
 */

/**
 * Every status a task may have, in the order views list them. `error` (a tool
 * error, `isError`) and `declined` (a declined question, then a tool error) are
 * what the kernel shows for a task that ended with a result; no server sends them.
 */
export const STATUSES = [
  'queued',
  'working',
  'submitted',
  'input_required',
  'completed',
  'error',
  'declined',
  'failed',
  'cancelled',
  'expired',
  'lost',
  'unknown'
] as const;

/** Statuses after which a task never changes. */
export const FINISHED: ReadonlySet<string> = new Set([
  'completed',
  'error',
  'declined',
  'failed',
  'cancelled',
  'expired',
  'lost',
  'unknown'
]);

/** Statuses shown as failures (filter, notifications, colours). */
export const FAILURES: ReadonlySet<string> = new Set([
  'error',
  'declined',
  'failed',
  'lost',
  'expired',
  'unknown'
]);

/** How each status reads in words. */
export const WORDS: Readonly<Record<string, string>> = {
  queued: 'queued',
  working: 'working',
  submitted: 'submitted',
  input_required: 'needs input',
  completed: 'completed',
  error: 'tool error',
  declined: 'declined',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'expired',
  lost: 'lost',
  unknown: 'unknown'
};

/** `input_required` → `needs input`; an unknown status reads as itself. */
export function inWords(status: string): string {
  return WORDS[status] ?? status;
}

/** Running, waiting (for input) and queued tasks of some kernels. */
export interface ICounts {
  readonly running: number;
  readonly waiting: number;
  /** Not sent yet (a fan-out's limit holds them back). */
  readonly queued?: number;
}

function some(counts: ICounts): boolean {
  return counts.running + counts.waiting + (counts.queued ?? 0) > 0;
}

function countWords(counts: ICounts): string {
  const queued = counts.queued ? ` · ${counts.queued} queued` : '';
  return `${counts.running} running${queued} · ${counts.waiting} waiting`;
}

/**
 * The item's text: `here` the current notebook's counts (null with no notebook current: then
 * `others` are simply every kernel's), `others` the other kernels'.
 */
export function statusText(here: ICounts | null, others: ICounts): string {
  if (here === null) {
    return some(others) ? `MCP: ${countWords(others)}` : 'MCP: idle';
  }
  if (!some(others)) {
    return some(here) ? `MCP: ${countWords(here)}` : 'MCP: idle';
  }
  if (!some(here)) {
    return `MCP (other notebooks): ${countWords(others)}`;
  }
  return `MCP: ${countWords(here)} · other notebooks: ${countWords(others)}`;
}
