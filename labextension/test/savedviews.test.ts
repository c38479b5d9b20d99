import { describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (under @lumino/widgets) reads as it loads.
vi.hoisted(() => {
  const scope = globalThis as {
    DragEvent?: unknown;
    MouseEvent: typeof MouseEvent;
  };
  scope.DragEvent ??= class DragEvent extends scope.MouseEvent {};
});

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { PromiseDelegate } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';
import { Panel } from '@lumino/widgets';

import {
  fill,
  guardWidgetViews,
  type INotebookSite,
  type IWidgetKernel,
  modelIdOf,
  summaryOf,
  WIDGET_VIEW,
  WidgetModels
} from '../src/savedviews';

const SUMMARY = '<div class="mtj-summary" style="x"><b>completed</b></div>';

/** A kernel connection's comms and its answers to comm_info_request, counted. */
class Kernel {
  constructor(
    readonly models: string[],
    readonly answer: 'ok' | 'error' | 'never' = 'ok'
  ) {}
  readonly live = new Set<string>();
  asked = 0;
  readonly statusChanged = new Signal<this, string>(this);

  hasComm(id: string): boolean {
    return this.live.has(id);
  }

  requestCommInfo(content: { target_name?: string }): Promise<never> {
    this.asked += 1;
    expect(content.target_name).toBe('jupyter.widget');
    if (this.answer === 'never') {
      return new Promise(() => undefined);
    }
    const comms = Object.fromEntries(
      this.models.map(id => [id, { target_name: 'jupyter.widget' }])
    );
    const reply =
      this.answer === 'ok'
        ? { content: { status: 'ok', comms } }
        : {
            content: { status: 'error', ename: 'x', evalue: 'y', traceback: [] }
          };
    return Promise.resolve(reply as never);
  }
}

const VIEW = { model_id: 'abc', version_major: 2, version_minor: 1 };

describe('the saved summary of a missing widget', () => {
  it('is the HTML of our own task, batch and board outputs only', () => {
    const summary = '<div class="mtj-summary" style="x">completed</div>';
    const board = '<div class="mtj-board-summary" style="x"></div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': summary
      })
    ).toBe(summary);
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': board
      })
    ).toBe(board);
    // a batch (%mcp_map) carries its summary in the same output since it has one box
    const batch = '<div class="mtj-batch-summary" style="x">50 tasks</div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': batch
      })
    ).toBe(batch);
    // a task still running when the notebook was saved
    const running = '<div class="mtj-task" style="x">running…</div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': running
      })
    ).toBe(running);
    // a task the live view showed on one line (a loop's): its summary is one line too
    const compact =
      '<div class="mtj-compact-summary" style="x">cancelled slow_compute label=t3</div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': compact
      })
    ).toBe(compact);
    // someone else's widget, an HTML output that is no widget, or nothing at all
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': '<div>other</div>'
      })
    ).toBeNull();
    expect(summaryOf({ 'text/html': summary })).toBeNull();
    expect(
      summaryOf({ 'application/vnd.jupyter.widget-view+json': VIEW })
    ).toBeNull();
    expect(summaryOf(null)).toBeNull();
  });
});

const asKernel = (kernel: Kernel): IWidgetKernel =>
  kernel as unknown as IWidgetKernel;

describe('which widget models a kernel has', () => {
  it('reads the saved view of an output', () => {
    expect(modelIdOf({ [WIDGET_VIEW]: { model_id: 'abc' } })).toBe('abc');
    expect(modelIdOf({ [WIDGET_VIEW]: { model_id: '' } })).toBeNull();
    expect(modelIdOf({ 'text/html': SUMMARY })).toBeNull();
    expect(modelIdOf(null)).toBeNull();
  });

  it('asks the kernel once for its widget comms, live comms not at all', async () => {
    const kernel = new Kernel(['kept']);
    const models = new WidgetModels();
    kernel.live.add('live');
    expect(await models.has(asKernel(kernel), 'live')).toBe(true);
    expect(kernel.asked).toBe(0);
    const answers = await Promise.all(
      ['kept', 'gone', 'gone2', 'kept'].map(id =>
        models.has(asKernel(kernel), id)
      )
    );
    expect(answers).toEqual([true, false, false, true]);
    expect(kernel.asked).toBe(1);
    // a restarted kernel has none of them: ask it again
    kernel.statusChanged.emit('restarting');
    kernel.models.length = 0;
    expect(await models.has(asKernel(kernel), 'kept')).toBe(false);
    expect(kernel.asked).toBe(2);
  });

  it('does not decide when the kernel does not answer (and asks again later)', async () => {
    const silent = new Kernel(['kept'], 'never');
    expect(await new WidgetModels(10).has(asKernel(silent), 'gone')).toBeNull();
    const failing = new Kernel(['kept'], 'error');
    const models = new WidgetModels();
    expect(await models.has(asKernel(failing), 'gone')).toBeNull();
    expect(await models.has(asKernel(failing), 'gone')).toBeNull();
    expect(failing.asked).toBe(2);
  });
});

/**
 * A notebook's rendermime as far as this matters: one factory per mime type with its rank, as
 * JupyterLab's RenderMimeRegistry (which needs more of a browser than jsdom has), and an HTML
 * renderer that writes the HTML as text.
 */
class RenderMimeRegistry {
  private readonly factories = new Map<
    string,
    { factory: IRenderMime.IRendererFactory; rank: number }
  >();

  constructor() {
    this.addFactory(
      {
        safe: true,
        mimeTypes: ['text/html'],
        createRenderer: () => {
          const renderer = new Panel() as Panel & IRenderMime.IRenderer;
          renderer.renderModel = async model => {
            // the HTML as text: what is drawn is what this test reads
            renderer.node.textContent = String(model.data['text/html']);
          };
          return renderer;
        }
      },
      50
    );
  }

  getFactory(mime: string): IRenderMime.IRendererFactory | undefined {
    return this.factories.get(mime)?.factory;
  }

  getRank(mime: string): number | undefined {
    return this.factories.get(mime)?.rank;
  }

  addFactory(factory: IRenderMime.IRendererFactory, rank = 100): void {
    for (const mime of factory.mimeTypes) {
      this.factories.set(mime, { factory, rank });
    }
  }

  removeMimeType(mime: string): void {
    this.factories.delete(mime);
  }

  createRenderer(mime: string): IRenderMime.IRenderer {
    return this.getFactory(mime)!.createRenderer({} as never);
  }
}

/** ipywidgets' renderer as far as this matters: a panel that asks its manager for the model. */
class WidgetRenderer extends Panel implements IRenderMime.IRenderer {
  static rendered: string[] = [];
  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const view = model.data[WIDGET_VIEW] as { model_id: string };
    WidgetRenderer.rendered.push(view.model_id);
    this.node.textContent = `view of ${view.model_id}`;
  }
}

const widgetFactory = (): IRenderMime.IRendererFactory => ({
  safe: false,
  mimeTypes: [WIDGET_VIEW],
  createRenderer: () => new WidgetRenderer()
});

function output(
  id: string,
  html: string | null,
  trusted = true
): IRenderMime.IMimeModel {
  const data: Record<string, unknown> = {
    [WIDGET_VIEW]: { model_id: id, version_major: 2, version_minor: 1 },
    'text/plain': 'a task'
  };
  if (html !== null) {
    data['text/html'] = html;
  }
  return {
    trusted,
    data: data as IRenderMime.IMimeModel['data'],
    metadata: {},
    setData: () => undefined
  };
}

function notebook(kernel: Kernel | null): {
  site: INotebookSite;
  ready: PromiseDelegate<void>;
  rendermime: RenderMimeRegistry;
} {
  const rendermime = new RenderMimeRegistry();
  rendermime.addFactory(widgetFactory(), -10);
  const ready = new PromiseDelegate<void>();
  const site: INotebookSite = {
    rendermime: rendermime as unknown as IRenderMimeRegistry,
    ready: ready.promise,
    kernel: () => (kernel ? asKernel(kernel) : null)
  };
  return { site, ready, rendermime };
}

async function render(
  rendermime: RenderMimeRegistry,
  model: IRenderMime.IMimeModel
): Promise<IRenderMime.IRenderer> {
  const renderer = rendermime.createRenderer(WIDGET_VIEW);
  await renderer.renderModel(model);
  return renderer;
}

describe('a saved widget view in a reopened notebook', () => {
  it('is our summary when the kernel lacks its model, ipywidgets otherwise', async () => {
    WidgetRenderer.rendered = [];
    const kernel = new Kernel(['kept']);
    kernel.live.add('live');
    const { site, ready, rendermime } = notebook(kernel);
    guardWidgetViews(site, new WidgetModels());
    ready.resolve();

    const gone = await render(rendermime, output('gone', SUMMARY));
    expect(gone).toBeInstanceOf(WidgetRenderer); // still ipywidgets' renderer, served as before
    expect(gone.node.textContent).toBe(SUMMARY);
    expect((gone as WidgetRenderer).widgets).toHaveLength(1);

    const kept = await render(rendermime, output('kept', SUMMARY));
    const live = await render(rendermime, output('live', SUMMARY));
    expect(kept.node.textContent).toBe('view of kept');
    expect(live.node.textContent).toBe('view of live');
    // someone else's widget: ipywidgets' own (and its error, if any)
    const other = await render(rendermime, output('other', '<div>x</div>'));
    expect(other.node.textContent).toBe('view of other');
    expect(WidgetRenderer.rendered).toEqual(['kept', 'live', 'other']);
    expect(kernel.asked).toBe(1);

    // the output drawn again (an update of its display) once the model is there: the view
    kernel.live.add('gone');
    await gone.renderModel(output('gone', SUMMARY));
    expect(gone.node.textContent).toBe('view of gone');
    expect((gone as WidgetRenderer).widgets).toHaveLength(0);
  });

  it('without a kernel is our summary; undecided it is left to ipywidgets', async () => {
    WidgetRenderer.rendered = [];
    const none = notebook(null);
    guardWidgetViews(none.site, new WidgetModels());
    const pending = render(none.rendermime, output('gone', SUMMARY));
    none.ready.resolve();
    expect((await pending).node.textContent).toBe(SUMMARY);

    const never = notebook(new Kernel([]));
    guardWidgetViews(never.site, new WidgetModels(), 10);
    const waited = await render(never.rendermime, output('gone', SUMMARY));
    expect(waited.node.textContent).toBe('view of gone');
  });

  it('follows ipywidgets when it puts its factory back for the kernel', async () => {
    WidgetRenderer.rendered = [];
    const { site, ready, rendermime } = notebook(new Kernel([]));
    guardWidgetViews(site, new WidgetModels());
    const guarded = rendermime.getFactory(WIDGET_VIEW);
    // as ipywidgets does once the kernel is known
    rendermime.removeMimeType(WIDGET_VIEW);
    rendermime.addFactory(widgetFactory(), -10);
    ready.resolve();
    await new Promise(r => setTimeout(r, 0));
    await new Promise(r => setTimeout(r, 0));
    expect(rendermime.getFactory(WIDGET_VIEW)).not.toBe(guarded);
    expect(rendermime.getRank(WIDGET_VIEW)).toBe(-10);
    const gone = await render(rendermime, output('gone', SUMMARY));
    expect(gone.node.textContent).toBe(SUMMARY);
    expect(WidgetRenderer.rendered).toEqual([]);
  });
});

/** A code cell's output area holding one widget output that shows `text` (as the widget manager left it). */
function failedCell(
  text: string,
  model: IRenderMime.IMimeModel
): { cell: unknown; node: HTMLElement } {
  const child = document.createElement('div');
  const node = document.createElement('div');
  node.className = 'jp-OutputArea-output';
  node.textContent = text;
  child.append(node);
  const cell = {
    outputArea: {
      widgets: [{ node: child }],
      model: { length: 1, get: () => model }
    }
  };
  return { cell, node };
}

describe('a widget output the widget manager failed to draw', () => {
  it('is our summary, by the same drawing; one still loading only when asked', async () => {
    const rendermime = new RenderMimeRegistry();
    const failed = failedCell(
      'Error displaying widget: model not found',
      output('gone', SUMMARY)
    );
    const loading = failedCell('Loading widget...', output('slow', SUMMARY));
    const other = failedCell(
      'Error displaying widget',
      output('other', '<div>x</div>')
    );
    const raced = failedCell('Error displaying widget', output('v', SUMMARY));
    const panel = {
      content: {
        rendermime,
        widgets: [failed, loading, other, raced].map(c => c.cell)
      }
    } as unknown as Parameters<typeof fill>[0];

    expect(fill(panel, false)).toBe(true); // one still loading: worth a later look
    expect(failed.node.dataset.mtjFallback).toBe('drawing');
    raced.node.append(document.createElement('span')); // a view drawn meanwhile stays
    await new Promise(r => setTimeout(r, 0));
    expect(failed.node.textContent).toBe(SUMMARY);
    expect(failed.node.title).toContain('the saved summary of this task');
    expect(failed.node.dataset.mtjFallback).toBeUndefined();
    expect(loading.node.textContent).toBe('Loading widget...');
    expect(other.node.textContent).toBe('Error displaying widget');
    expect(raced.node.textContent).toBe('Error displaying widget');
    expect(raced.node.children).toHaveLength(1);

    expect(fill(panel, true)).toBe(false);
    await new Promise(r => setTimeout(r, 0));
    expect(loading.node.textContent).toBe(SUMMARY);
  });
});
