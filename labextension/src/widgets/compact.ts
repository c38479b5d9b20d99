/**
 * CompactTaskWidget front end (`compact_widget.py`): one task on one line, for
 * cells that start many. Text is set with `textContent` only. The elapsed time
 * ticks here; the bar is determinate when the server reports a total, else an
 * activity bar while the task runs.
 */

import { formatDuration } from '../format';
import { FAILURES, inWords } from '../status';
import type { IRenderProps, IWidgetModule } from './anywidget';
import { button, h } from './dom';
import { follow, KernelClock, statusClass } from './live';

/** The traits of `CompactTaskWidget`. */
export interface ICompactState {
  tool: string;
  server: string;
  label: string;
  status: string;
  message: string;
  progress: [number, number | null] | null;
  started: number;
  finished: number | null;
  done: boolean;
  failed: boolean;
  cancelling: boolean;
  sent_at: number;
}

const TRAITS = [
  'tool',
  'server',
  'label',
  'status',
  'message',
  'progress',
  'started',
  'finished',
  'done',
  'failed',
  'cancelling'
] as const satisfies readonly (keyof ICompactState)[];

/** The bar's width in percent, null for an activity bar, undefined for none. */
export function barWidth(state: ICompactState): number | null | undefined {
  const progress = state.progress;
  if (progress) {
    const [value, total] = progress;
    if (typeof total === 'number' && total > 0) {
      return Math.min(100, Math.max(0, (value / total) * 100));
    }
  }
  return state.done ? undefined : null;
}

function render({ model, el }: IRenderProps<ICompactState>): () => void {
  const clock = new KernelClock(model);
  const root = h('div', 'mtj-compact');
  const badge = h('span', 'mtj-badge');
  const name = h('span', 'mtj-compact-name');
  const tool = h('span', 'mtj-tool');
  const label = h('span', 'mtj-compact-label');
  name.append(tool, label);
  const bar = h('span', 'mtj-compact-bar');
  const fill = h('span', 'mtj-compact-fill');
  bar.append(fill);
  const message = h('span', 'mtj-compact-message');
  const elapsed = h('span', 'mtj-compact-elapsed');
  const cancel = button(
    '×',
    'jp-mod-styled mtj-compact-cancel',
    'Cancel this task (asks the server)'
  );
  cancel.setAttribute('aria-label', 'Cancel task');
  cancel.addEventListener('click', () => {
    cancel.disabled = true;
    model.send({ type: 'cancel' });
  });
  root.append(badge, name, bar, message, elapsed, cancel);
  el.append(root);

  function tick(): void {
    const started = model.get('started');
    const finished = model.get('finished');
    elapsed.textContent = started
      ? formatDuration((finished ?? clock.now()) - started)
      : '';
  }

  function update(): void {
    const state = {} as ICompactState;
    for (const trait of TRAITS) {
      (state as unknown as Record<string, unknown>)[trait] = model.get(trait);
    }
    const status = state.status;
    const failed = state.failed || FAILURES.has(status);
    badge.textContent = inWords(status);
    badge.className = `mtj-badge ${statusClass(status)}`;
    root.classList.toggle('mtj-compact-failed', failed);
    tool.textContent = state.tool;
    label.textContent = state.label ? ` ${state.label}` : '';
    name.title = `${state.tool}${state.label ? ` ${state.label}` : ''} on ${state.server}`;
    message.textContent = state.message;
    message.title = state.message;
    const width = barWidth(state);
    bar.hidden = width === undefined;
    bar.classList.toggle('mtj-compact-activity', width === null);
    fill.style.width =
      width === null || width === undefined ? '' : `${width.toFixed(1)}%`;
    cancel.hidden = state.done;
    cancel.disabled = state.cancelling || state.done;
    tick();
  }

  return follow(model, TRAITS, update, tick, clock);
}

export default { render } satisfies IWidgetModule<ICompactState>;
