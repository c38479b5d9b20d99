/**
 * A task's saved view: its output holds its live widget and its static summary
 * (`display.show_task`; a board's and a batch's too). A notebook reopened
 * without the kernel that drew the widget cannot draw it; this module draws the
 * output's own summary in its place, by one path (`drawSummary`: the notebook's
 * HTML renderer, sanitized unless the output is trusted, as any HTML output).
 * Only outputs whose HTML is one of ours are touched (`summaryOf`: `mtj-summary`,
 * `mtj-task`, `mtj-compact-summary`, `mtj-batch-summary`, `mtj-board-summary`).
 * It gets there two ways:
 *
 * - before ipywidgets tries (`guardWidgetViews`): a view whose model the kernel
 *   lacks is drawn as its summary without asking ipywidgets, whose renderer
 *   would log "Error: widget model not found" in the browser's console for each
 *   one (50 for a notebook of 50 tasks). JupyterLab keeps one renderer factory
 *   per mime type, so this does not add a factory next to ipywidgets': it wraps
 *   whichever factory the notebook's rendermime holds for the widget-view mime
 *   type (again after ipywidgets puts its own in place once the kernel is
 *   known). Each renderer is still ipywidgets' own (its manager finds and serves
 *   it as before); only its `renderModel` first looks at the output. Everything
 *   else, and every case this cannot decide (no answer from the kernel in time),
 *   goes to ipywidgets. Whether the kernel has a model: a widget's model id is
 *   its comm's id. The kernel connection knows the comms opened while this page
 *   follows it (`hasComm`, so a live output is decided at once); for a saved
 *   output the kernel is asked once for its widget comms (`comm_info_request`,
 *   the request ipywidgets' manager sends to restore a reopened notebook's
 *   widgets);
 * - after, for whatever gets past that (`drawMissingWidgets`): an output that
 *   shows the widget manager's "Error displaying widget: model not found" (or
 *   "Loading widget..." for longer than LOADING_GRACE_MS) gets its summary. A
 *   widget that does appear later replaces the summary (the widget manager
 *   clears the node before it adds the view), and a failure the manager writes
 *   over it later is replaced by the summary again.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Kernel } from '@jupyterlab/services';

import { offerRedraw, type IRedrawSite } from './appredraw';
import { watchAppViews } from './appteardown';

export const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';
const WIDGET_TARGET = 'jupyter.widget';
/** How long the kernel may take to list its widget comms (it answers between cells). */
export const COMM_INFO_MS = 10000;
/** How long a notebook's kernel may take to be known (started or chosen) before ipywidgets decides. */
export const READY_MS = 30000;
/** How long "Loading widget..." may stay before the summary is drawn (a live widget takes less). */
export const LOADING_GRACE_MS = 3000;
const MISSING = /^Error displaying widget(: model not found)?$/;
const LOADING = 'Loading widget...';
const TITLE =
  'the saved summary of this task (its live widget needs the kernel that drew it)';
// A task's summary (`mtj-summary` once it ended, `mtj-task` while it ran, `mtj-compact-summary` for a
// task shown on one line), a board's, a batch's.
const OURS =
  /^<div class="mtj-(summary|task|compact-summary|board-summary|batch-summary)"/;

/** The output's static summary if the output is a task's (or a board's) and has one. */
export function summaryOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) {
    return null;
  }
  const bundle = data as Record<string, unknown>;
  const html = bundle['text/html'];
  if (
    !(WIDGET_VIEW in bundle) ||
    typeof html !== 'string' ||
    !OURS.test(html)
  ) {
    return null;
  }
  return html;
}

/** Where a summary goes: a renderer's node, and the renderer when it is a panel (ipywidgets'). */
interface ISummaryHost {
  readonly node: HTMLElement;
  addWidget?: (widget: IRenderMime.IRenderer) => void;
}

/**
 * The one way a saved view is drawn: `html` through the notebook's HTML renderer, then in place of
 * what `host` shows (a panel's child when `host` is one), titled. `overDrawn` false: only if nothing
 * else was drawn in `host` meanwhile (null then). While it renders, `host` is marked as being drawn.
 */
export async function drawSummary(
  rendermime: IRenderMimeRegistry,
  host: ISummaryHost,
  html: string,
  trusted: boolean,
  overDrawn = true
): Promise<IRenderMime.IRenderer | null> {
  const node = host.node;
  node.dataset.mtjFallback = 'drawing';
  const summary = rendermime.createRenderer('text/html');
  try {
    await summary.renderModel({
      trusted,
      data: { 'text/html': html },
      metadata: {},
      setData: () => undefined
    });
  } finally {
    delete node.dataset.mtjFallback;
  }
  if (!overDrawn && node.children.length) {
    summary.dispose();
    return null;
  }
  node.textContent = '';
  node.title = TITLE;
  if (typeof host.addWidget === 'function') {
    host.addWidget(summary); // ipywidgets' renderer is a panel: the summary is its child
  } else {
    node.append(summary.node);
  }
  return summary;
}

/** What this module asks of a kernel connection. */
export type IWidgetKernel = Pick<
  Kernel.IKernelConnection,
  'hasComm' | 'requestCommInfo' | 'statusChanged'
>;

/** The saved view's model id, when `data` is a widget view with one. */
export function modelIdOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) {
    return null;
  }
  const view = (data as Record<string, unknown>)[WIDGET_VIEW];
  if (typeof view !== 'object' || view === null) {
    return null;
  }
  const id = (view as Record<string, unknown>).model_id;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** `promise`'s value, or `fallback` when it takes longer than `ms` or fails. */
export function within<T>(
  promise: Promise<T>,
  ms: number,
  fallback: T
): Promise<T> {
  return new Promise<T>(resolve => {
    const timer = setTimeout(() => resolve(fallback), ms);
    promise.then(
      value => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      }
    );
  });
}

/** Which widget models the kernels have: one question per kernel (and per restart). */
export class WidgetModels {
  constructor(private readonly timeoutMs: number = COMM_INFO_MS) {}

  /** True when `kernel` has model `id`, false when it has not, null when it did not say in time. */
  async has(kernel: IWidgetKernel, id: string): Promise<boolean | null> {
    if (kernel.hasComm(id)) {
      return true;
    }
    const ids = await this.commIds(kernel);
    if (ids === null) {
      return null;
    }
    return ids.has(id) || kernel.hasComm(id);
  }

  private commIds(kernel: IWidgetKernel): Promise<Set<string> | null> {
    let asked = this.asked.get(kernel);
    if (!asked) {
      asked = within(
        kernel
          .requestCommInfo({ target_name: WIDGET_TARGET })
          .then(reply =>
            reply.content.status === 'ok'
              ? new Set(Object.keys(reply.content.comms))
              : null
          ),
        this.timeoutMs,
        null
      );
      this.asked.set(kernel, asked);
      // No answer: ask again next time. A restart ends every model: ask the new kernel.
      void asked.then(ids => {
        if (ids === null && this.asked.get(kernel) === asked) {
          this.asked.delete(kernel);
        }
      });
      if (!this.followed.has(kernel)) {
        this.followed.add(kernel);
        kernel.statusChanged.connect((_, status) => {
          if (['restarting', 'autorestarting', 'dead'].includes(status)) {
            this.asked.delete(kernel);
          }
        });
      }
    }
    return asked;
  }

  private readonly asked = new WeakMap<
    IWidgetKernel,
    Promise<Set<string> | null>
  >();
  private readonly followed = new WeakSet<IWidgetKernel>();
}

/** What the guard reads of a notebook: its rendermime and its kernel. */
export interface INotebookSite {
  readonly rendermime: IRenderMimeRegistry;
  /** Resolves when the notebook's kernel is known (or that it has none). */
  readonly ready: Promise<void>;
  /** The notebook's kernel connection once `ready`; null without a kernel. */
  kernel(): IWidgetKernel | null;
  /** What a saved MCP Apps view's "draw again" button runs its call on (`appredraw.ts`); none: no button. */
  readonly redraw?: IRedrawSite;
}

/** The site of a notebook panel. */
export function notebookSite(panel: NotebookPanel): INotebookSite {
  return {
    rendermime: panel.content.rendermime,
    ready: panel.sessionContext.ready,
    kernel: () => panel.sessionContext.session?.kernel ?? null,
    redraw: redrawSite(panel)
  };
}

/** What a saved MCP Apps view's button of `panel` runs its call on (`appredraw.ts`). */
export function redrawSite(panel: NotebookPanel): IRedrawSite {
  return {
    rendermime: panel.content.rendermime,
    kernel: () => panel.sessionContext?.session?.kernel ?? null
  };
}

const GUARDED = new WeakSet<IRenderMime.IRendererFactory>();

/**
 * Draw the saved summary of our widget views whose model the notebook's kernel lacks, in place of
 * ipywidgets' renderer (which would log an error); from now on and after ipywidgets replaces its
 * factory once the kernel is known.
 */
export function guardWidgetViews(
  site: INotebookSite,
  models: WidgetModels,
  readyMs: number = READY_MS
): void {
  const wrap = (): void => guard(site, models, readyMs);
  wrap();
  // ipywidgets puts its factory (with the kernel's widget manager) in place when the kernel is
  // known: wrap that one too, once its own continuation of `ready` has run.
  void site.ready.then(
    () => setTimeout(wrap, 0),
    () => undefined
  );
}

function guard(
  site: INotebookSite,
  models: WidgetModels,
  readyMs: number
): void {
  const { rendermime } = site;
  const factory = rendermime.getFactory(WIDGET_VIEW);
  if (!factory || GUARDED.has(factory)) {
    return;
  }
  const guarded: IRenderMime.IRendererFactory = {
    safe: factory.safe,
    mimeTypes: factory.mimeTypes,
    defaultRank: factory.defaultRank,
    createRenderer: options => {
      const renderer = factory.createRenderer(options);
      watchAppViews(renderer); // an MCP Apps view inside is torn down before it leaves the page
      return guardRenderer(renderer, site, models, readyMs);
    }
  };
  GUARDED.add(guarded);
  rendermime.addFactory(guarded, rendermime.getRank(WIDGET_VIEW));
}

/** `renderer` (ipywidgets'), drawing our missing views' summaries itself. */
function guardRenderer(
  renderer: IRenderMime.IRenderer,
  site: INotebookSite,
  models: WidgetModels,
  readyMs: number
): IRenderMime.IRenderer {
  const render = renderer.renderModel.bind(renderer);
  let drawn: IRenderMime.IRenderer | null = null;
  renderer.renderModel = async (model: IRenderMime.IMimeModel) => {
    drawn?.dispose();
    drawn = null;
    guard(site, models, readyMs); // ipywidgets may have put its factory back meanwhile
    const summary = summaryOf(model.data);
    const id = modelIdOf(model.data);
    if (summary !== null && id !== null) {
      renderer.node.textContent = LOADING; // as ipywidgets says while it waits
      if (await missing(site, models, id, readyMs)) {
        drawn = await drawSummary(
          site.rendermime,
          renderer,
          summary,
          model.trusted
        );
        if (drawn && site.redraw) {
          offerRedraw(drawn.node, summary, site.redraw);
        }
        return;
      }
    }
    return render(model);
  };
  return renderer;
}

/** True when the notebook's kernel (or the lack of one) cannot have model `id`. */
async function missing(
  site: INotebookSite,
  models: WidgetModels,
  id: string,
  readyMs: number
): Promise<boolean> {
  const known = await within(
    site.ready.then(() => true),
    readyMs,
    false
  );
  if (!known) {
    return false; // undecided: ipywidgets' turn, as before
  }
  const kernel = site.kernel();
  if (kernel === null) {
    return true;
  }
  return (await models.has(kernel, id)) === false;
}

/** What `drawMissingWidgets` reads of a cell: its output area, when it is a code cell. */
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
        // Only if nothing else was drawn meanwhile. The widget manager may still write its failure
        // over the summary (it was drawn over "Loading widget..."): the next look draws it again.
        void drawSummary(
          panel.content.rendermime,
          { node },
          html,
          output.trusted,
          false
        ).then(drawn => {
          if (drawn) {
            offerRedraw(drawn.node, html, redrawSite(panel));
          }
        });
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
