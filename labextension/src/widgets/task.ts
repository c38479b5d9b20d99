/**
 * TaskWidget front end (`task_widget.py`). Everything from the server is set
 * with `textContent`; no HTML. Clocks (elapsed, ETA, TTL) tick here, from
 * epoch-second traits, so the kernel sends nothing while a task merely runs. A
 * question the task asks is drawn by the question forms (`form.ts`).
 *
 * The status reads in words (`needs input`, `tool error`); a running task
 * always shows activity: a bar filled to its progress when the server reports
 * one with a total, else an indeterminate bar beside the status message. The
 * task id, the poll interval and the TTL are in a "details" view.
 */

import { formatDuration } from '../format';
import { FINISHED, inWords } from '../status';
import type { IRenderProps, IWidgetModule } from './anywidget';
import { button, h } from './dom';
import { IQuestionEntry, questionsView } from './form';
import { follow, KernelClock, statusClass } from './live';
import { IResultPreview, preview, previewText } from './preview';

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
  task_id: string;
  /** When the task should end (epoch s), from its progress and rate; null without an estimate. */
  eta: number | null;
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
  'task_id',
  'eta',
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
  const cancel = button(
    CANCEL_TEXT,
    'mtj-cancel jp-Button jp-mod-styled jp-mod-reject',
    'ask the server to cancel this task'
  );
  // Distinct from a question's own Cancel (which dismisses the question).
  cancel.setAttribute('aria-label', 'Cancel the task');
  head.append(badge, ' ', tool, h('span', 'mtj-muted', ' on '), server, cancel);
  const message = h('div', 'mtj-message');
  const progressRow = h('div', 'mtj-progress');
  const bar = h('div', 'mtj-bar');
  bar.setAttribute('role', 'progressbar');
  const fill = h('div', 'mtj-fill');
  bar.append(fill);
  const progressText = h('span', 'mtj-progress-text');
  const eta = h('span', 'mtj-eta mtj-muted');
  progressRow.append(bar, progressText, eta);
  const meta = h('div', 'mtj-meta mtj-muted');
  const elapsed = h('span', 'mtj-elapsed');
  meta.append(elapsed);
  const details = h('details', 'mtj-details mtj-muted');
  const detailsBody = h('div', 'mtj-details-body');
  const taskId = h('div', 'mtj-task-id');
  const ttl = h('div', 'mtj-ttl');
  const poll = h('div', 'mtj-poll');
  detailsBody.append(taskId, poll, ttl);
  details.append(h('summary', null, 'details'), detailsBody);
  meta.append(details);
  const pending = h('div', 'mtj-pending');
  const cancelError = h('div', 'mtj-error-text');
  const error = h('pre', 'mtj-pre mtj-error-text');
  const result = h('div', 'mtj-result-box');
  const copy = button(
    'Copy',
    'mtj-copy jp-Button jp-mod-styled',
    'copy the text of the result'
  );
  copy.setAttribute('aria-label', 'Copy the result text');
  const logs = h('details', 'mtj-logs');
  const logsSummary = h('summary');
  const logsBody = h('pre', 'mtj-pre mtj-log-lines');
  logs.append(logsSummary, logsBody);
  const questions = questionsView(model);
  root.append(
    head,
    progressRow,
    message,
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
  let shownResultStatus = '';
  let shownLogs: string[] | null = null;
  let copyText = '';
  let copyTimer: ReturnType<typeof setTimeout> | null = null;

  function tick(): void {
    const started = model.get('started');
    const finished = model.get('finished');
    const running = finished === null || finished === undefined;
    const end = running ? clock.now() : finished;
    elapsed.textContent = `${running ? 'running for' : 'took'} ${formatDuration(end - started)}`;
    ttl.textContent = ttlText(model.get('ttl_ms'), {
      created: model.get('created') ?? started,
      now: clock.now(),
      finished: FINISHED.has(model.get('status')),
      fetched: model.get('done')
    });
    ttl.hidden = !ttl.textContent;
    const due = model.get('eta');
    const left = due === null || due === undefined ? null : due - clock.now();
    eta.textContent =
      left === null
        ? ''
        : left > 0
          ? `about ${formatDuration(left)} left`
          : 'finishing…';
    eta.hidden = !eta.textContent || model.get('done');
  }

  function update(): void {
    const status = model.get('status');
    badge.textContent = inWords(status);
    badge.className = `mtj-badge ${statusClass(status)}`;
    badge.title = `status: ${status}`;
    tool.textContent = model.get('tool');
    server.textContent = model.get('server');
    const statusMessage = model.get('status_message');

    const done = model.get('done');
    const progress = model.get('progress');
    const active =
      !done && !FINISHED.has(status) && status !== 'input_required';
    const shown = progress && !done ? progressView(progress) : null;
    if (shown || active) {
      // Determinate when the server reports progress with a total; else activity.
      const percent = shown ? shown.percent : null;
      bar.classList.toggle('mtj-indeterminate', percent === null);
      fill.style.width = percent === null ? '' : `${percent.toFixed(1)}%`;
      if (percent === null) {
        bar.removeAttribute('aria-valuenow');
      } else {
        bar.setAttribute('aria-valuenow', percent.toFixed(0));
      }
      bar.setAttribute('aria-label', shown ? shown.text : 'working');
      // Without a progress text the status message goes beside the bar.
      progressText.textContent = shown ? shown.text : statusMessage;
      // ... and beside a progress text that already says it, not again below.
      message.textContent =
        shown && !shown.text.includes(statusMessage) ? statusMessage : '';
      progressRow.hidden = false;
    } else {
      message.textContent = statusMessage;
      progressRow.hidden = true;
    }
    message.hidden = !message.textContent;

    const pollMs = model.get('poll_interval_ms');
    poll.textContent =
      pollMs === null || pollMs === undefined
        ? ''
        : `polled every ${formatDuration(pollMs / 1000)}`;
    poll.hidden = !poll.textContent;
    const id = model.get('task_id');
    taskId.textContent = id ? `task id ${id}` : 'not a task yet';

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
    cancel.textContent = cancelling ? 'Cancelling…' : CANCEL_TEXT;
    cancel.hidden = done;
    cancelError.textContent = model.get('cancel_error');
    cancelError.hidden = !model.get('cancel_error');

    error.textContent = model.get('error');
    error.hidden = !model.get('error');
    error.className = `mtj-pre ${status === 'cancelled' ? 'mtj-muted' : 'mtj-error-text'}`;

    const res = model.get('result');
    if (
      res !== shownResult ||
      (res?.is_error && status !== shownResultStatus)
    ) {
      shownResult = res;
      shownResultStatus = status;
      copyText = res ? previewText(res) : '';
      result.replaceChildren(
        ...(res ? [preview(res, status)] : []),
        ...(copyText ? [copy] : [])
      );
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
  copy.addEventListener('click', () => {
    void copyToClipboard(copyText).then(ok => {
      copy.textContent = ok ? 'Copied' : 'Copy failed';
      if (copyTimer) {
        clearTimeout(copyTimer);
      }
      copyTimer = setTimeout(() => {
        copy.textContent = 'Copy';
        copyTimer = null;
      }, 2000);
    });
  });
  const stop = follow(model, TRAITS, update, tick, clock);
  return () => {
    if (copyTimer) {
      clearTimeout(copyTimer);
    }
    stop();
  };
}

const CANCEL_TEXT = 'Cancel task';

/**
 * What the TTL means now: how long the server keeps a running task (and how
 * much of that is left), how long it keeps a finished task's result, and
 * nothing once the result is fetched (`fetched`) or when there is no TTL.
 */
export function ttlText(
  ttlMs: number | null | undefined,
  at: { created: number; now: number; finished: boolean; fetched: boolean }
): string {
  if (ttlMs === null || ttlMs === undefined || at.fetched) {
    return '';
  }
  const ttl = formatDuration(ttlMs / 1000);
  if (at.finished) {
    return `the server keeps the result for ${ttl} after the task was created`;
  }
  const left = at.created + ttlMs / 1000 - at.now;
  return left > 0
    ? `the server keeps this task for ${ttl} after it was created (${formatDuration(left)} left)`
    : `the server's ${ttl} for this task are over (it may drop the task)`;
}

/** Write `text` to the clipboard; false when the browser refused. */
async function copyToClipboard(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (an insecure context): the older way, through a selection.
    const area = h('textarea');
    area.value = text;
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    } finally {
      area.remove();
    }
  }
}

export default { render } satisfies IWidgetModule<ITaskState>;
