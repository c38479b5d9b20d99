/**
 * One click draws a saved MCP Apps view again (issue 32 item 6). A notebook saved after an app task keeps
 * its summary and a note, never the view (`jupyter/display.app_output`); where the task has a record in
 * the task index the note carries it (`data-mtj-record`). When `savedviews.ts` draws such a summary (the
 * kernel that drew the view is gone), this adds a button under the note.
 *
 * The click runs the documented public call `mcp_tasks_jupyter.redraw_app(RECORD)` in the notebook's
 * kernel (the same call a person can type) and draws what it displays under the note, through the
 * notebook's own renderers (the view is an ordinary widget of that kernel, isolated as every view is:
 * `widgets/app.ts`). The kernel reads the record, finds its connection to the same server, reads the
 * view's resource again and hands it the recorded arguments and result; where it cannot (no connection to
 * that server, no such record) it says what to do, and that is shown. Without a kernel the click says to
 * start one. Nothing runs until the person clicks; nothing is added to the notebook's cells or its saved
 * outputs (what is drawn lives under the note only while the page is open).
 */

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

/** The class of what this module adds under a saved note. */
export const REDRAW_CLASS = 'mtj-app-redraw';
/** How long the kernel may take to answer the call before the click says so. */
export const REDRAW_WAIT_MS = 60000;
const RECORD =
  /<div class=(['"])mtj-app-note\1 data-mtj-record=(['"])(\d{1,19})\2>/;
const NO_KERNEL =
  'No kernel: start one (Kernel ▸ Restart Kernel or Change Kernel…), connect to the server again ' +
  '(%mcp_connect …), then click again.';

/** The task index record a saved app task's summary names (null: none, the view cannot be drawn again). */
export function recordOf(html: string): string | null {
  const found = RECORD.exec(html);
  return found ? found[3] : null;
}

/** The call the click runs in the kernel (documented: `mtj.redraw_app`). */
export function redrawCode(record: string): string {
  if (!/^\d{1,19}$/.test(record)) {
    throw new Error(`not a record id: ${record}`);
  }
  return `__import__("mcp_tasks_jupyter").redraw_app(${record})`;
}

/** What the button needs of the notebook. */
export interface IRedrawSite {
  readonly rendermime: IRenderMimeRegistry;
  /** The notebook's kernel now (null: none). */
  kernel(): Pick<Kernel.IKernelConnection, 'requestExecute'> | null;
}

/**
 * Under the saved note drawn in `node` (from `html`), a button that draws the view again, when the
 * summary names a record. Idempotent: a node that has one keeps it.
 */
export function offerRedraw(
  node: HTMLElement,
  html: string,
  site: IRedrawSite
): void {
  const record = recordOf(html);
  if (record === null || node.querySelector(`.${REDRAW_CLASS}`)) {
    return;
  }
  const box = document.createElement('div');
  box.className = REDRAW_CLASS;
  const button = document.createElement('button');
  button.className =
    'jp-Button jp-mod-styled jp-mod-accept mtj-app-redraw-button';
  button.textContent = 'Draw the view again';
  button.title = `runs mcp_tasks_jupyter.redraw_app(${record}) in this notebook's kernel`;
  const said = document.createElement('span');
  said.className = 'mtj-app-redraw-said';
  const drawn = document.createElement('div');
  drawn.className = 'mtj-app-redrawn';
  box.append(button, said, drawn);
  node.append(box);
  const renderers: IRenderMime.IRenderer[] = [];
  button.addEventListener('click', () => {
    const kernel = site.kernel();
    if (kernel === null) {
      said.textContent = NO_KERNEL;
      box.dataset.mtjRedraw = 'no kernel';
      return;
    }
    for (const renderer of renderers.splice(0)) {
      renderer.dispose();
    }
    drawn.textContent = '';
    said.textContent = 'asking the kernel…';
    button.disabled = true;
    box.dataset.mtjRedraw = 'asking';
    void redraw(kernel, record, site.rendermime, drawn, renderers).then(
      outcome => {
        said.textContent = outcome === 'drawn' ? '' : outcome;
        box.dataset.mtjRedraw = outcome === 'drawn' ? 'drawn' : 'said';
        button.disabled = false;
      }
    );
  });
}

/** Run the call, drawing what it displays into `into`; 'drawn', or what to tell the person. */
async function redraw(
  kernel: Pick<Kernel.IKernelConnection, 'requestExecute'>,
  record: string,
  rendermime: IRenderMimeRegistry,
  into: HTMLElement,
  renderers: IRenderMime.IRenderer[]
): Promise<string> {
  let future: Kernel.IShellFuture<
    KernelMessage.IExecuteRequestMsg,
    KernelMessage.IExecuteReplyMsg
  >;
  try {
    future = kernel.requestExecute({
      code: redrawCode(record),
      silent: false,
      store_history: false,
      allow_stdin: false,
      stop_on_error: false
    });
  } catch (error) {
    return `the kernel cannot be asked (${String(error)}): start it again and click again`;
  }
  const texts: string[] = [];
  let shown = 0;
  future.onIOPub = (msg: KernelMessage.IIOPubMessage): void => {
    const kind = msg.header.msg_type;
    const content = msg.content as Record<string, unknown>;
    if (kind === 'display_data' || kind === 'execute_result') {
      const data = content.data as IRenderMime.IMimeModel['data'];
      // What the kernel displays now, on the person's click: trusted as any output of a cell they run.
      const mime = rendermime.preferredMimeType(data, 'any');
      if (!mime) {
        return;
      }
      if (mime === 'text/plain') {
        texts.push(String(data['text/plain'] ?? ''));
        return;
      }
      const renderer = rendermime.createRenderer(mime);
      renderers.push(renderer);
      Widget.attach(renderer, into);
      shown += 1;
      void renderer.renderModel({
        trusted: true,
        data,
        metadata: (content.metadata ??
          {}) as IRenderMime.IMimeModel['metadata'],
        setData: () => undefined
      });
    } else if (kind === 'stream') {
      texts.push(String(content.text ?? ''));
    } else if (kind === 'error') {
      texts.push(`${String(content.ename)}: ${String(content.evalue)}`);
    }
  };
  const answered = await Promise.race([
    future.done.then(
      () => true,
      () => true
    ),
    new Promise<boolean>(resolve =>
      setTimeout(() => resolve(false), REDRAW_WAIT_MS)
    )
  ]);
  if (!answered) {
    return 'the kernel did not answer (it may be busy running a cell): click again when it is idle';
  }
  const text = texts.join('\n').trim();
  if (shown > 0) {
    return text ? text : 'drawn';
  }
  return text || 'the kernel drew nothing';
}
