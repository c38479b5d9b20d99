/**
 * The postMessage channel between an MCP Apps view's iframe and its host
 * bridge (`app.ts`), as the bridge's `Transport`.
 *
 * A message is taken only when its `source` is this very iframe's window
 * (another view, the page or a frame inside the view cannot speak for it),
 * when it is a JSON-RPC 2.0 object (the bridge then validates it against the
 * spec's schemas) of at most `MAX_MESSAGE_CHARS` once serialised, and while the
 * view keeps under `MAX_MESSAGES_PER_SECOND` (a view that floods the bridge is
 * dropped from, never waited on). What is refused is counted in `refused`.
 * Messages to the view go to that window only, with target origin `*`: an
 * opaque-origin document has no origin to name.
 */

/** A JSON-RPC message, as the bridge's `Transport` passes it. */
export type JsonRpcMessage = Record<string, unknown>;

/** The part of `@modelcontextprotocol/client`'s `Transport` the bridge uses. */
export interface IFrameTransport {
  start(): Promise<void>;
  send(message: JsonRpcMessage): Promise<void>;
  close(): Promise<void>;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JsonRpcMessage) => void;
}

export const MAX_MESSAGE_CHARS = 4 * 1024 * 1024;
export const MAX_MESSAGES_PER_SECOND = 200;

/** Why messages were refused, by reason. */
export interface IRefused {
  source: number;
  shape: number;
  size: number;
  flood: number;
}

/** The serialised length of `data`, or -1 when it cannot be serialised. */
export function serialisedLength(data: unknown): number {
  try {
    const text = JSON.stringify(data);
    return typeof text === 'string' ? text.length : -1;
  } catch {
    return -1;
  }
}

export class FrameTransport implements IFrameTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JsonRpcMessage) => void;
  readonly refused: IRefused = { source: 0, shape: 0, size: 0, flood: 0 };
  private windowStart = 0;
  private inWindow = 0;
  private closed = false;
  private readonly listener = (event: MessageEvent): void =>
    this.received(event);

  constructor(
    private readonly frame: HTMLIFrameElement,
    private readonly host: Window = window,
    private readonly now: () => number = () => Date.now()
  ) {}

  async start(): Promise<void> {
    this.host.addEventListener('message', this.listener);
  }

  async send(message: JsonRpcMessage): Promise<void> {
    const target = this.frame.contentWindow;
    if (!this.closed && target) {
      target.postMessage(message, '*');
    }
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    this.host.removeEventListener('message', this.listener);
    this.onclose?.();
  }

  /** Public for the tests: one message event from anywhere. */
  received(event: MessageEvent): void {
    const own = this.frame.contentWindow;
    if (this.closed || !own || event.source !== own) {
      this.refused.source += 1;
      return;
    }
    const now = this.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    this.inWindow += 1;
    if (this.inWindow > MAX_MESSAGES_PER_SECOND) {
      this.refused.flood += 1;
      return;
    }
    const data: unknown = event.data;
    if (
      typeof data !== 'object' ||
      data === null ||
      Array.isArray(data) ||
      (data as JsonRpcMessage).jsonrpc !== '2.0'
    ) {
      this.refused.shape += 1;
      return;
    }
    const length = serialisedLength(data);
    if (length < 0 || length > MAX_MESSAGE_CHARS) {
      this.refused.size += 1;
      return;
    }
    this.onmessage?.(data as JsonRpcMessage);
  }
}
