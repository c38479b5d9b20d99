/**
 * A task's output holds its live widget and its static summary (`display.show_task`). A notebook
 * reopened without the kernel that drew the widget gets "Error displaying widget: model not found"
 * (or "Loading widget..." for good) from the widget manager in place of the widget: this draws the
 * output's own summary there instead, through the notebook's HTML renderer (sanitized unless the
 * output is trusted, as any HTML output). Only outputs whose HTML is one of ours are touched
 * (`mtj-summary`, `mtj-task`, `mtj-compact-summary`, `mtj-batch-summary`, `mtj-board-summary`); a widget
 * that does appear later replaces the summary (the widget manager clears the node before it adds the
 * view), and a failure the manager writes over it later is replaced by the summary again. (`savedviews.ts` keeps ipywidgets from trying in the first
 * place in JupyterLab; this stays for whatever gets past it.)
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

const MISSING = /^Error displaying widget(: model not found)?$/;
const LOADING = 'Loading widget...';
/** How long "Loading widget..." may stay before the summary is drawn (a live widget takes less). */
export const LOADING_GRACE_MS = 3000;
// A task's summary (`mtj-summary` once it ended, `mtj-task` while it ran, `mtj-compact-summary` for a
// task shown on one line), a board's, a batch's.
const OURS =
  /^<div class="mtj-(summary|task|compact-summary|board-summary|batch-summary)"/;

/** What this module reads of a cell: its output area, when it is a code cell. */
interface IOutputs {
  readonly widgets: ReadonlyArray<{ readonly node: HTMLElement }>;
  readonly model: {
    readonly length: number;
    get(index: number): { readonly data: unknown; readonly trusted: boolean };
  };
}

/** Keep the outputs of `panel` drawn: a missing task widget shows its saved summary. */
export function drawMissingWidgets(panel: NotebookPanel): void {
  let scheduled = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const check = (): void => {
    if (scheduled) {
      return;
    }
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      if (fill(panel, false) && !timer) {
        timer = setTimeout(() => {
          timer = null;
          fill(panel, true);
        }, LOADING_GRACE_MS);
      }
    });
  };
  const observer = new MutationObserver(check);
  observer.observe(panel.content.node, {
    childList: true,
    subtree: true,
    characterData: true
  });
  check();
  panel.disposed.connect(() => {
    observer.disconnect();
    if (timer) {
      clearTimeout(timer);
    }
  });
}

/**
 * Draw the summary of every output whose widget is missing; with `loading`, also of those still
 * "Loading widget...". True when some output is still loading (worth a later look).
 */
export function fill(panel: NotebookPanel, loading: boolean): boolean {
  let waiting = false;
  for (const cell of panel.content.widgets) {
    const outputs = (cell as unknown as { outputArea?: IOutputs }).outputArea;
    if (!outputs || !outputs.model || !outputs.widgets) {
      continue;
    }
    const count = Math.min(outputs.model.length, outputs.widgets.length);
    for (let i = 0; i < count; i++) {
      const node = failedWidgetNode(outputs.widgets[i].node, loading);
      if (node === 'loading') {
        waiting = true;
        continue;
      }
      if (!node) {
        continue;
      }
      const output = outputs.model.get(i);
      const html = summaryOf(output.data);
      if (html !== null) {
        draw(panel, node, html, output.trusted);
      }
    }
  }
  return waiting;
}

/** The node of a widget renderer that shows only the manager's failure text, 'loading' or null. */
function failedWidgetNode(
  output: HTMLElement,
  loading: boolean
): HTMLElement | 'loading' | null {
  for (const node of output.querySelectorAll<HTMLElement>(
    '.jp-OutputArea-output'
  )) {
    // Drawn already (the summary, or a widget's view), or being drawn.
    if (node.children.length || node.dataset.mtjFallback === 'drawing') {
      continue;
    }
    const text = (node.textContent || '').trim();
    if (MISSING.test(text)) {
      return node;
    }
    if (text === LOADING) {
      return loading ? node : 'loading';
    }
  }
  return null;
}

/** The output's static summary if the output is a task's (or a board's) and has one. */
export function summaryOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) {
    return null;
  }
  const bundle = data as Record<string, unknown>;
  const html = bundle['text/html'];
  if (
    !('application/vnd.jupyter.widget-view+json' in bundle) ||
    typeof html !== 'string' ||
    !OURS.test(html)
  ) {
    return null;
  }
  return html;
}

function draw(
  panel: NotebookPanel,
  node: HTMLElement,
  html: string,
  trusted: boolean
): void {
  node.dataset.mtjFallback = 'drawing';
  const renderer = panel.content.rendermime.createRenderer('text/html');
  const model: IRenderMime.IMimeModel = {
    trusted,
    data: { 'text/html': html },
    metadata: {},
    setData: () => undefined
  };
  void renderer.renderModel(model).then(() => {
    // Only if nothing else was drawn meanwhile. The widget manager may still write its failure
    // over the summary (it was drawn over "Loading widget..."): the next look draws it again.
    delete node.dataset.mtjFallback;
    if (!node.children.length) {
      node.textContent = '';
      node.append(renderer.node);
      node.title =
        'the saved summary of this task (its live widget needs the kernel that drew it)';
    }
  });
}
