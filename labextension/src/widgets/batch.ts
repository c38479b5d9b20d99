/**
 * BatchWidget front end (`batch_widget.py`): one view for all the tasks of a
 * `client.map` batch. Counts by status, one aggregate progress bar, elapsed
 * time and ETA (ticking here, from epoch-second traits), the failed and the
 * slowest tasks (expandable), Cancel all. Text goes in with `textContent` only.
 */

import { formatDuration } from '../format';
import { FAILURES, STATUSES, inWords } from '../status';
import type { IRenderProps, IWidgetModule } from './anywidget';
import { button, h } from './dom';
import { follow, KernelClock, statusClass } from './live';

/** One task of the batch as the kernel lists it. */
export interface IBatchTask {
  index: number;
  label: string;
  status: string;
  /** Epoch seconds. */
  started: number;
  finished: number | null;
  error: string | null;
}

/** The traits of `BatchWidget`. */
export interface IBatchState {
  tool: string;
  server: string;
  total: number;
  limit: number;
  counts: Record<string, number>;
  ended: number;
  /** 0..1: ended tasks whole, running ones by their own progress. */
  fraction: number;
  started: number;
  finished: number | null;
  done: boolean;
  failed: IBatchTask[];
  slowest: IBatchTask[];
  cancelling: boolean;
  cancel_error: string;
  /** How a resumed sweep's tasks came back ('' for a batch not resumed). */
  resumed: string;
  sent_at: number;
}

export const TRAITS = [
  'tool',
  'server',
  'total',
  'limit',
  'counts',
  'ended',
  'fraction',
  'started',
  'finished',
  'done',
  'failed',
  'slowest',
  'cancelling',
  'cancel_error',
  'resumed'
] as const satisfies readonly (keyof IBatchState)[];

/**
 * Seconds left at the pace so far: elapsed / fraction × (1 − fraction); null
 * when nothing is known yet or the batch is over.
 */
export function eta(fraction: number, elapsed: number): number | null {
  if (!(fraction > 0) || fraction >= 1 || !(elapsed >= 0)) {
    return null;
  }
  return (elapsed / fraction) * (1 - fraction);
}

/** The counts in the vocabulary's order (unknown statuses last), without zeros. */
export function orderedCounts(
  counts: Record<string, number>
): [string, number][] {
  const order = (s: string): number => {
    const i = (STATUSES as readonly string[]).indexOf(s);
    return i < 0 ? STATUSES.length : i;
  };
  return Object.entries(counts ?? {})
    .filter(([, n]) => typeof n === 'number' && n > 0)
    .sort(([a], [b]) => order(a) - order(b));
}

function render({ model, el }: IRenderProps<IBatchState>): () => void {
  const clock = new KernelClock(model);

  const root = h('div', 'mtj-batch');
  const head = h('div', 'mtj-head');
  const tool = h('span', 'mtj-tool');
  const server = h('span', 'mtj-server');
  const size = h('span', 'mtj-muted mtj-batch-size');
  const cancel = button('Cancel all', 'mtj-cancel');
  head.append(tool, h('span', 'mtj-muted', ' on '), server, size, cancel);
  const counts = h('div', 'mtj-batch-counts');
  const progressRow = h('div', 'mtj-progress');
  const bar = h('div', 'mtj-bar');
  const fill = h('div', 'mtj-fill');
  bar.append(fill);
  const progressText = h('span', 'mtj-progress-text');
  progressRow.append(bar, progressText);
  const meta = h('div', 'mtj-meta mtj-muted');
  const elapsed = h('span', 'mtj-elapsed');
  const left = h('span', 'mtj-eta');
  meta.append(elapsed, left);
  const cancelError = h('div', 'mtj-error-text mtj-cancel-error');
  const resumed = h('div', 'mtj-muted mtj-batch-resumed');
  const failed = h('details', 'mtj-batch-failed');
  const failedSummary = h('summary', 'mtj-error-title');
  const failedList = h('ul', 'mtj-batch-list');
  failed.append(failedSummary, failedList);
  const slowest = h('details', 'mtj-batch-slowest');
  const slowestSummary = h('summary');
  const slowestList = h('ul', 'mtj-batch-list');
  slowest.append(slowestSummary, slowestList);
  root.append(
    head,
    resumed,
    counts,
    progressRow,
    meta,
    cancelError,
    failed,
    slowest
  );
  el.append(root);

  /** The duration cells of the slowest tasks still running: they tick. */
  let ticking: [HTMLElement, IBatchTask][] = [];

  function taskItem(task: IBatchTask, detail: HTMLElement): HTMLElement {
    const item = h('li', 'mtj-batch-task');
    const badge = h('span', `mtj-badge ${statusClass(task.status)}`);
    badge.textContent = inWords(task.status);
    item.append(
      h('span', 'mtj-muted', `#${task.index} `),
      h('span', 'mtj-batch-label', task.label),
      ' ',
      badge,
      ' ',
      detail
    );
    return item;
  }

  function tick(): void {
    const started = model.get('started');
    const finished = model.get('finished');
    const running = finished === null || finished === undefined;
    const spent = (running ? clock.now() : finished) - started;
    elapsed.textContent = `${running ? 'running for' : 'took'} ${formatDuration(spent)}`;
    const seconds = running ? eta(model.get('fraction'), spent) : null;
    left.textContent =
      seconds === null ? '' : ` · about ${formatDuration(seconds)} left`;
    for (const [cell, task] of ticking) {
      cell.textContent = formatDuration(clock.now() - task.started);
    }
  }

  function update(): void {
    tool.textContent = model.get('tool');
    server.textContent = model.get('server');
    const total = model.get('total');
    const limit = model.get('limit');
    size.textContent = ` · ${total} task${total === 1 ? '' : 's'}, at most ${limit} at once`;

    counts.replaceChildren(
      ...orderedCounts(model.get('counts')).map(([status, n]) => {
        const badge = h(
          'span',
          `mtj-badge ${statusClass(status)}`,
          `${n} ${inWords(status)}`
        );
        badge.dataset.status = status;
        return badge;
      })
    );

    const fraction = Math.min(1, Math.max(0, model.get('fraction') || 0));
    fill.style.width = `${(fraction * 100).toFixed(1)}%`;
    progressText.textContent = `${model.get('ended')}/${total} ended (${Math.round(fraction * 100)}%)`;

    const done = model.get('done');
    const cancelling = model.get('cancelling');
    cancel.hidden = done;
    cancel.disabled = done || cancelling;
    cancel.textContent = cancelling ? 'Cancelling…' : 'Cancel all';
    resumed.textContent = model.get('resumed') ?? '';
    resumed.hidden = !model.get('resumed');
    cancelError.textContent = model.get('cancel_error');
    cancelError.hidden = !model.get('cancel_error');

    const failures = model.get('failed') || [];
    const failedCount = Object.entries(model.get('counts') ?? {})
      .filter(([s]) => FAILURES.has(s))
      .reduce((sum, [, n]) => sum + n, 0);
    const shownFailed = Math.max(failedCount, failures.length);
    failedSummary.textContent = `${shownFailed} failed${shownFailed > failures.length ? `, first ${failures.length} shown` : ''}`;
    failedList.replaceChildren(
      ...failures.map(task =>
        taskItem(task, h('span', 'mtj-error-text', task.error ?? ''))
      )
    );
    failed.hidden = !failures.length;

    const slow = model.get('slowest') || [];
    ticking = [];
    slowestSummary.textContent = `slowest ${slow.length}`;
    slowestList.replaceChildren(
      ...slow.map(task => {
        const cell = h('span', 'mtj-batch-duration');
        if (task.finished === null || task.finished === undefined) {
          ticking.push([cell, task]);
        } else {
          cell.textContent = formatDuration(task.finished - task.started);
        }
        return taskItem(task, cell);
      })
    );
    slowest.hidden = !slow.length;
    tick();
  }

  cancel.addEventListener('click', () => {
    cancel.disabled = true;
    model.send({ type: 'cancel' });
  });
  return follow(model, TRAITS, update, tick, clock);
}

export default { render } satisfies IWidgetModule<IBatchState>;
