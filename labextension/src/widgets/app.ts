/**
 * AppViewWidget front end (`jupyter/widgets/app_widget.py`): an MCP Apps
 * view (a tool's own HTML, `io.modelcontextprotocol/ui`) drawn in the task's
 * output, and the host side of its bridge.
 *
 * Isolation: the view is an `<iframe sandbox="allow-scripts" srcdoc=…>`.
 * Without `allow-same-origin` it runs in an opaque origin of its own (one per
 * view), so it cannot read or script this page, its cookies, storage or the
 * server's token, nor another view; without `allow-top-navigation*`,
 * `allow-popups` and `allow-forms` it cannot navigate the page, open windows
 * or submit forms, even on a click. Its CSP (`appcsp.ts`) keeps every request
 * of its own inside the browser unless the resource declared other origins,
 * and never to this page's host. If it navigates itself away, it is stopped.
 *
 * The bridge is `AppBridge` of `@modelcontextprotocol/ext-apps` over our own
 * transport (`appframe.ts`: source frame, shape, size and rate checked). What
 * the view asks of the server (`tools/call`, `resources/read`) goes to the
 * kernel as a custom message and is answered by the kernel's client (which
 * refuses tools whose visibility leaves out "app"); links open only when the
 * person clicks (each link asked, opened or dismissed is told to the kernel,
 * which keeps it in the task's record); there is no model, so `ui/message` is
 * declined and model context is accepted and dropped.
 */

import {
  AppBridge,
  type McpUiHostContext
} from '@modelcontextprotocol/ext-apps/app-bridge';
import type { Transport } from '@modelcontextprotocol/client';

import type { IRenderProps, IWidgetModel, IWidgetModule } from './anywidget';
import { buildCsp, withCsp, type IDeclaredCsp } from './appcsp';
import {
  ATTACHED_EVENT,
  TEARDOWN_EVENT,
  type TeardownReason,
  VIEW_CLASS
} from './appevents';
import { FrameTransport } from './appframe';
import { button, h } from './dom';

/** The traits of `AppViewWidget`. */
export interface IAppState {
  server: string;
  tool: string;
  uri: string;
  /** The view's HTML ("" while it is being read). */
  html: string;
  /** Why the view cannot be drawn ("" when it can). */
  problem: string;
  csp: IDeclaredCsp;
  prefers_border: boolean | null;
  /** The tool's listing entry (name, description, inputSchema) for `toolInfo`. */
  tool_info: Record<string, unknown>;
  /** The call's arguments, once known. */
  tool_input: Record<string, unknown> | null;
  /** The raw CallToolResult, once the task completed. */
  tool_result: Record<string, unknown> | null;
  /** `running`, `completed`, `cancelled` or `failed`. */
  phase: string;
  /** Why it was cancelled or failed. */
  reason: string;
}

export const MIN_HEIGHT = 40;
export const MAX_HEIGHT = 1600;
const FIRST_HEIGHT = 120;
/** Calls to the kernel in flight per view; more are refused at once. */
export const MAX_CALLS_IN_FLIGHT = 8;
const CALL_TIMEOUT_MS = 130_000;
const TEARDOWN_WAIT_MS = 500;

/** The theme JupyterLab shows (`data-jp-theme-light` on the body). */
export function pageTheme(doc: Document = document): 'light' | 'dark' {
  return doc.body.dataset.jpThemeLight === 'false' ? 'dark' : 'light';
}

/** The spec's style variables, from JupyterLab's own CSS variables. */
export function themeVariables(
  doc: Document = document
): Record<string, string> {
  const style = getComputedStyle(doc.body);
  const read = (name: string): string => style.getPropertyValue(name).trim();
  const pairs: [string, string][] = [
    ['--color-background-primary', '--jp-layout-color0'],
    ['--color-background-secondary', '--jp-layout-color1'],
    ['--color-background-tertiary', '--jp-layout-color2'],
    ['--color-text-primary', '--jp-ui-font-color0'],
    ['--color-text-secondary', '--jp-ui-font-color1'],
    ['--color-text-tertiary', '--jp-ui-font-color2'],
    ['--color-border-primary', '--jp-border-color0'],
    ['--color-border-secondary', '--jp-border-color1'],
    ['--font-sans', '--jp-ui-font-family'],
    ['--font-mono', '--jp-code-font-family']
  ];
  const variables: Record<string, string> = {};
  for (const [spec, jupyter] of pairs) {
    const value = read(jupyter);
    // A value is data for the view's own CSS: nothing that could close a rule.
    if (value && value.length <= 200 && !/[;{}<>]/.test(value)) {
      variables[spec] = value;
    }
  }
  return variables;
}

/** A height the view asked for, kept within bounds (null: not a number). */
export function boundedHeight(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return null;
  }
  return Math.round(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, value)));
}

/** Whether `url` is an http(s) link a person may be offered. */
export function linkable(url: unknown): url is string {
  if (typeof url !== 'string' || url.length > 4096) {
    return false;
  }
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `Element.moveBefore` (a move that keeps a frame running), where the browser has it. */
type MoveBefore = (node: Node, child: Node | null) => void;

interface IPending {
  resolve: (value: Record<string, unknown>) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** Calls to the kernel over the widget's comm, answered by id. */
class KernelCalls {
  private next = 1;
  private readonly pending = new Map<number, IPending>();

  constructor(private readonly model: IWidgetModel<IAppState>) {}

  call(method: string, params: unknown): Promise<Record<string, unknown>> {
    if (this.pending.size >= MAX_CALLS_IN_FLIGHT) {
      return Promise.reject(
        new Error(`more than ${MAX_CALLS_IN_FLIGHT} calls in flight`)
      );
    }
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from the kernel`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.model.send({ type: 'call', id, method, params });
    });
  }

  answered(content: unknown): void {
    if (typeof content !== 'object' || content === null) {
      return;
    }
    const answer = content as Record<string, unknown>;
    if (answer.type !== 'answer' || typeof answer.id !== 'number') {
      return;
    }
    const waiting = this.pending.get(answer.id);
    if (!waiting) {
      return;
    }
    this.pending.delete(answer.id);
    clearTimeout(waiting.timer);
    const error = answer.error as Record<string, unknown> | undefined;
    if (error) {
      waiting.reject(new Error(String(error.message ?? 'refused')));
    } else {
      waiting.resolve((answer.result as Record<string, unknown>) ?? {});
    }
  }

  close(): void {
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error('the view was closed'));
    }
    this.pending.clear();
  }
}

function render({ model, el }: IRenderProps<IAppState>): () => void {
  const root = h('div', VIEW_CLASS);

  const head = h('div', 'mtj-app-head');
  const title = h('span', 'mtj-app-title');
  const note = h('span', 'mtj-app-note');
  head.append(title, note);
  const links = h('div', 'mtj-app-links');
  const frameBox = h('div', 'mtj-app-frame');
  root.append(head, links, frameBox);
  el.append(root);

  let bridge: AppBridge | null = null;
  let frame: HTMLIFrameElement | null = null;
  let initialized = false;
  let sentInput = false;
  let sentEnd = false;
  let drawnHtml = '';
  /** Why the view was last torn down ('' while it is drawn). */
  let lastTeardown = '';
  const calls = new KernelCalls(model);
  const onCustom = (content: unknown): void => {
    calls.answered(content);
    if (
      typeof content === 'object' &&
      content !== null &&
      (content as Record<string, unknown>).type === 'teardown'
    ) {
      void teardown().then(() => model.send({ type: 'torn-down' }));
    }
  };
  model.on('msg:custom', onCustom);
  // Sent by the JupyterLab extension while the output is still on the page (`appteardown.ts`): its
  // output is leaving (cleared, the notebook closed) or the kernel restarts.
  const onTeardownEvent = (event: Event): void => {
    const why = (event as CustomEvent<TeardownReason>).detail;
    const holder = why === 'detached' ? park(frame) : null;
    void teardown(why).finally(() => holder?.remove());
  };
  // Back on the page (a windowed notebook re-attaching the cell): drawn again, from ui/initialize.
  const onAttached = (): void => {
    if (!frame && lastTeardown === 'detached') {
      lastTeardown = '';
      drawnHtml = '';
      draw();
    }
  };
  root.addEventListener(TEARDOWN_EVENT, onTeardownEvent);
  root.addEventListener(ATTACHED_EVENT, onAttached);
  // The page closing: the teardown is sent, best effort; nothing can wait for its answer.
  const onPageHide = (): void => {
    if (bridge && initialized) {
      void bridge.teardownResource({}).catch(() => undefined);
    }
  };
  window.addEventListener('pagehide', onPageHide);

  function hostContext(): McpUiHostContext {
    const width = Math.max(200, Math.round(frameBox.clientWidth || 600));
    return {
      theme: pageTheme(),
      styles: { variables: themeVariables() },
      displayMode: 'inline',
      availableDisplayModes: ['inline'],
      containerDimensions: { width, maxHeight: MAX_HEIGHT },
      platform: 'web',
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userAgent: 'mcp-tasks-jupyter',
      toolInfo: { tool: model.get('tool_info') } as McpUiHostContext['toolInfo']
    } as McpUiHostContext;
  }

  /** Links offered so far: each is told to the kernel (asked, then opened or dismissed) for the record. */
  let linksOffered = 0;

  function offerLink(url: string): Promise<Record<string, unknown>> {
    const link = ++linksOffered;
    const tell = (answer: string): void =>
      model.send({ type: 'link', link, url, answer });
    tell('asked');
    return new Promise(resolve => {
      const row = h('div', 'mtj-app-link');
      const text = h('span', 'mtj-app-link-text', 'The view asks to open ');
      const link = h('a', 'mtj-app-link-url', url);
      link.href = url;
      link.target = '_blank';
      link.rel = 'noopener noreferrer';
      const dismiss = button('Dismiss', 'jp-Button jp-mod-styled');
      link.addEventListener('click', () => {
        row.remove();
        tell('opened');
        resolve({});
      });
      dismiss.addEventListener('click', () => {
        row.remove();
        tell('dismissed');
        resolve({ isError: true });
      });
      text.append(link);
      row.append(text, dismiss);
      links.append(row);
    });
  }

  function syncTask(): void {
    if (!bridge || !initialized) {
      return;
    }
    const input = model.get('tool_input');
    if (input && !sentInput) {
      sentInput = true;
      void bridge.sendToolInput({ arguments: input });
    }
    if (sentEnd) {
      return;
    }
    const phase = model.get('phase');
    const result = model.get('tool_result');
    if (phase === 'completed' && result) {
      sentEnd = true;
      void bridge.sendToolResult(
        result as Parameters<AppBridge['sendToolResult']>[0]
      );
    } else if (phase === 'cancelled' || phase === 'failed') {
      sentEnd = true;
      void bridge.sendToolCancelled({
        reason: model.get('reason') || phase
      });
    }
  }

  /** `iframe` moved, still running, into a hidden holder on the page (null: it cannot be). */
  function park(iframe: HTMLIFrameElement | null): HTMLElement | null {
    const holder = document.createElement('div');
    const move = (holder as unknown as { moveBefore?: MoveBefore }).moveBefore;
    if (!iframe || !iframe.isConnected || typeof move !== 'function') {
      return null;
    }
    holder.className = 'mtj-app-parked';
    holder.setAttribute('aria-hidden', 'true');
    document.body.append(holder);
    try {
      move.call(holder, iframe, null);
      return holder;
    } catch {
      holder.remove();
      return null;
    }
  }

  /**
   * Ask the view for `ui/resource-teardown` and wait for its answer (bounded), then close it. Its
   * bridge and frame are let go of at once, so a view drawn again meanwhile is not touched.
   * `root.dataset.mtjTeardown` says how it went: `WHY answered` or `WHY unanswered`.
   */
  async function teardown(why = 'kernel'): Promise<void> {
    const current = bridge;
    const currentFrame = frame;
    const wasInitialized = initialized;
    bridge = null;
    frame = null;
    initialized = false;
    lastTeardown = why;
    if (current && wasInitialized) {
      const answered = await Promise.race([
        current.teardownResource({}).then(
          () => true,
          () => false
        ),
        new Promise<boolean>(resolve =>
          setTimeout(() => resolve(false), TEARDOWN_WAIT_MS)
        )
      ]);
      root.dataset.mtjTeardown = `${why} ${answered ? 'answered' : 'unanswered'}`;
    }
    if (current) {
      void current.close().catch(() => undefined);
    }
    currentFrame?.remove();
    if (why === 'restart') {
      note.textContent = 'the kernel restarted: the view was closed';
    }
  }

  function stop(): void {
    initialized = false;
    const current = bridge;
    bridge = null;
    if (current) {
      void current.close().catch(() => undefined);
    }
    frame?.remove();
    frame = null;
  }

  function draw(): void {
    const html = model.get('html');
    title.textContent = `${model.get('tool')} on ${model.get('server')}`;
    const problem = model.get('problem');
    note.textContent = problem
      ? `the view cannot be drawn: ${problem}`
      : html
        ? model.get('uri')
        : 'reading the view…';
    root.classList.toggle(
      'mtj-app-border',
      model.get('prefers_border') !== false
    );
    if (!html || problem || html === drawnHtml) {
      syncTask();
      return;
    }
    stop();
    lastTeardown = '';
    drawnHtml = html;
    initialized = sentInput = sentEnd = false;
    const iframe = document.createElement('iframe');
    iframe.className = 'mtj-app-iframe';
    // An opaque origin of its own: no allow-same-origin, no navigation of the
    // page, no pop-ups, no forms; no permission (camera, ...) is delegated.
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.setAttribute('allow', '');
    iframe.setAttribute('referrerpolicy', 'no-referrer');
    iframe.setAttribute('title', `${model.get('tool')} view`);
    iframe.style.height = `${FIRST_HEIGHT}px`;
    const policy = buildCsp(model.get('csp'), location.hostname);
    iframe.srcdoc = withCsp(html, policy);
    // Credentialless: whatever the frame loads (a navigation of its own included, which no CSP
    // governs) goes without the page's cookies, so it can never be a request of the notebook's user.
    iframe.setAttribute('credentialless', '');
    let loads = 0;
    iframe.addEventListener('load', () => {
      loads += 1;
      if (loads > 1) {
        // A second document in the frame (JupyterLab re-attaching a cell reloads its frames, or the
        // view navigated itself): it starts over with ui/initialize and is told the task again.
        initialized = sentInput = sentEnd = false;
      }
    });
    frame = iframe;
    frameBox.append(iframe);
    const hostBridge = new AppBridge(
      null,
      { name: 'mcp-tasks-jupyter', version: '1' },
      {
        openLinks: {},
        serverTools: {},
        serverResources: {},
        logging: {},
        sandbox: { permissions: {}, csp: model.get('csp') ?? {} }
      },
      { hostContext: hostContext() }
    );
    hostBridge.oninitialized = () => {
      initialized = true;
      syncTask();
    };
    hostBridge.onsizechange = ({ height }) => {
      const bounded = boundedHeight(height);
      if (bounded !== null && frame) {
        frame.style.height = `${bounded}px`;
      }
    };
    hostBridge.oncalltool = async params =>
      (await calls.call('tools/call', params)) as Awaited<
        ReturnType<NonNullable<AppBridge['oncalltool']>>
      >;
    hostBridge.onreadresource = async params =>
      (await calls.call('resources/read', params)) as Awaited<
        ReturnType<NonNullable<AppBridge['onreadresource']>>
      >;
    hostBridge.onopenlink = async ({ url }) =>
      linkable(url) ? offerLink(url) : { isError: true };
    hostBridge.onmessage = async () => ({ isError: true });
    hostBridge.onupdatemodelcontext = async () => ({});
    hostBridge.onrequestdisplaymode = async () => ({ mode: 'inline' });
    hostBridge.onloggingmessage = params => {
      model.send({
        type: 'log',
        level: String(params.level).slice(0, 20),
        data: JSON.stringify(params.data ?? null).slice(0, 2000)
      });
    };
    const channel = new FrameTransport(iframe);
    bridge = hostBridge;
    void hostBridge.connect(channel as unknown as Transport);
  }

  const themeWatch = new MutationObserver(() => {
    if (bridge && initialized) {
      void bridge.sendHostContextChange({
        theme: pageTheme(),
        styles: { variables: themeVariables() }
      } as McpUiHostContext);
    }
  });
  themeWatch.observe(document.body, {
    attributes: true,
    attributeFilter: ['data-jp-theme-light', 'data-jp-theme-name']
  });

  const traits = [
    'html',
    'problem',
    'tool_input',
    'tool_result',
    'phase',
    'reason'
  ] as const;
  for (const trait of traits) {
    model.on(`change:${trait}`, draw);
  }
  draw();

  return () => {
    themeWatch.disconnect();
    for (const trait of traits) {
      model.off(`change:${trait}`, draw);
    }
    model.off('msg:custom', onCustom);
    root.removeEventListener(TEARDOWN_EVENT, onTeardownEvent);
    root.removeEventListener(ATTACHED_EVENT, onAttached);
    window.removeEventListener('pagehide', onPageHide);
    calls.close();
    // The view is going. In a notebook the JupyterLab extension has asked for its teardown already,
    // before the output left the page (`appteardown.ts`), and there is nothing left to do here.
    // Elsewhere, where the frame is still on the page and the browser can move it without reloading
    // it (moveBefore), it waits off-screen for ui/resource-teardown's answer.
    const holder = park(frame);
    void teardown().finally(() => holder?.remove());
  };
}

const widget: IWidgetModule<IAppState> = { render };
export default widget;
