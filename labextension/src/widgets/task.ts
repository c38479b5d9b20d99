/**
 * TaskWidget front end (`task_widget.py`). Everything from the server is set
 * with `textContent`; no HTML. Clocks (elapsed, TTL) tick here, from
 * epoch-second traits, so the kernel sends nothing while a task merely runs. A
 * question the task asks is drawn by the question forms (`form.ts`).
 */

import { formatDuration } from '../format';
import type { IRenderProps, IWidgetModule } from './anywidget';
import { button, h } from './dom';
import { IQuestionEntry, questionsView } from './form';
import { follow, KernelClock, statusClass } from './live';
import { IResultPreview, preview } from './preview';

/** The traits of `TaskWidget`. */
export interface ITaskState {
  tool: string;
  server: string;
  status: string;
  status_message: string;
  /** `[progress, total or null, message or null]`, null when the server sent no progress. */
  progress: [number, number | null, string | null] | null;
  /** Epoch seconds. */
  started: number;
  finished: number | null;
  created: number | null;
  ttl_ms: number | null;
  poll_interval_ms: number | null;
  done: boolean;
  error: string;
  result: IResultPreview | null;
  logs: string[];
  log_count: number;
  pending: string[];
  cancelling: boolean;
  cancel_error: string;
  questions: IQuestionEntry[];
  sent_at: number;
}

/** The traits whose change redraws the view. */
export const TRAITS = [
  'tool',
  'server',
  'status',
  'status_message',
  'progress',
  'started',
  'finished',
  'created',
  'ttl_ms',
  'poll_interval_ms',
  'done',
  'error',
  'result',
  'logs',
  'log_count',
  'pending',
  'cancelling',
  'cancel_error',
  'questions'
] as const satisfies readonly (keyof ITaskState)[];

/** What a progress triple reads as: the bar's width (null: unknown total) and its text. */
export function progressView([value, total, text]: NonNullable<
  ITaskState['progress']
>): { percent: number | null; text: string } {
  const known = typeof total === 'number' && total > 0;
  const fraction = known ? Math.min(1, Math.max(0, value / total)) : null;
  const label =
    fraction === null
      ? `${value}`
      : `${value}/${total} (${Math.round(fraction * 100)}%)`;
  return {
    percent: fraction === null ? null : fraction * 100,
    text: label + (text ? ` ${text}` : '')
  };
}

function render({ model, el }: IRenderProps<ITaskState>): () => void {
  const clock = new KernelClock(model);

  const root = h('div', 'mtj-task');
  const head = h('div', 'mtj-head');
  const badge = h('span', 'mtj-badge');
  const tool = h('span', 'mtj-tool');
  const server = h('span', 'mtj-server');
  const cancel = button('Cancel', 'mtj-cancel');
  head.append(badge, ' ', tool, h('span', 'mtj-muted', ' on '), server, cancel);
  const message = h('div', 'mtj-message');
  const progressRow = h('div', 'mtj-progress');
  const bar = h('div', 'mtj-bar');
  const fill = h('div', 'mtj-fill');
  bar.append(fill);
  const progressText = h('span', 'mtj-progress-text');
  progressRow.append(bar, progressText);
  const meta = h('div', 'mtj-meta mtj-muted');
  const elapsed = h('span', 'mtj-elapsed');
  const ttl = h('span', 'mtj-ttl');
  const poll = h('span', 'mtj-poll');
  meta.append(elapsed, ttl, poll);
  const pending = h('div', 'mtj-pending');
  const cancelError = h('div', 'mtj-error-text');
  const error = h('pre', 'mtj-pre mtj-error-text');
  const result = h('div');
  const logs = h('details', 'mtj-logs');
  const logsSummary = h('summary');
  const logsBody = h('pre', 'mtj-pre mtj-log-lines');
  logs.append(logsSummary, logsBody);
  const questions = questionsView(model);
  root.append(
    head,
    message,
    progressRow,
    meta,
    pending,
    questions.root,
    cancelError,
    error,
    result,
    logs
  );
  el.append(root);

  let shownResult: IResultPreview | null = null;
  let shownLogs: string[] | null = null;

  function tick(): void {
    const started = model.get('started');
    const finished = model.get('finished');
    const running = finished === null || finished === undefined;
    const end = running ? clock.now() : finished;
    elapsed.textContent = `${running ? 'running for' : 'took'} ${formatDuration(end - started)}`;
    const ttlMs = model.get('ttl_ms');
    if (ttlMs === null || ttlMs === undefined) {
      ttl.textContent = '';
    } else {
      const created = model.get('created') ?? started;
      const left = created + ttlMs / 1000 - clock.now();
      ttl.textContent =
        left > 0 ? ` · TTL ${formatDuration(left)} left` : ' · TTL over';
    }
  }

  function update(): void {
    const status = model.get('status');
    badge.textContent = status;
    badge.className = `mtj-badge ${statusClass(status)}`;
    tool.textContent = model.get('tool');
    server.textContent = model.get('server');
    message.textContent = model.get('status_message');
    message.hidden = !model.get('status_message');

    const done = model.get('done');
    const progress = model.get('progress');
    if (progress && !done) {
      const shown = progressView(progress);
      bar.classList.toggle('mtj-indeterminate', shown.percent === null);
      fill.style.width =
        shown.percent === null ? '' : `${shown.percent.toFixed(1)}%`;
      progressText.textContent = shown.text;
      progressRow.hidden = false;
    } else {
      progressRow.hidden = true;
    }

    const pollMs = model.get('poll_interval_ms');
    poll.textContent =
      pollMs === null || pollMs === undefined
        ? ''
        : ` · polled every ${formatDuration(pollMs / 1000)}`;

    questions.update();
    // A question with a form on show says so itself; list only the others (answered elsewhere).
    const withForms = questions.openMessages();
    const waiting = (model.get('pending') || []).filter(q => !withForms.has(q));
    pending.replaceChildren(
      ...waiting.map(q => h('div', 'mtj-question', `waiting for input: ${q}`))
    );
    pending.hidden = !waiting.length;

    const cancelling = model.get('cancelling');
    cancel.disabled = done || cancelling;
    cancel.textContent = cancelling ? 'Cancelling…' : 'Cancel';
    cancel.hidden = done;
    cancelError.textContent = model.get('cancel_error');
    cancelError.hidden = !model.get('cancel_error');

    error.textContent = model.get('error');
    error.hidden = !model.get('error');
    error.className = `mtj-pre ${status === 'cancelled' ? 'mtj-muted' : 'mtj-error-text'}`;

    const res = model.get('result');
    if (res !== shownResult) {
      shownResult = res;
      result.replaceChildren(...(res ? [preview(res)] : []));
    }

    const lines = model.get('logs') || [];
    if (lines !== shownLogs) {
      shownLogs = lines;
      const count = model.get('log_count');
      const more = count > lines.length ? `, last ${lines.length} shown` : '';
      logsSummary.textContent = `log (${count} line${count === 1 ? '' : 's'}${more})`;
      logsBody.textContent = lines.join('\n');
    }
    logs.hidden = !lines.length;
    tick();
  }

  cancel.addEventListener('click', () => {
    cancel.disabled = true;
    model.send({ type: 'cancel' });
  });
  return follow(model, TRAITS, update, tick, clock);
}

export default { render } satisfies IWidgetModule<ITaskState>;
