/**
 * The part of anywidget's front-end API the widgets use, typed by the state a
 * widget's Python class syncs (its traits). anywidget calls `render` with the
 * widget's model and the element to draw in; `render` may return a cleanup.
 * (A small interface of our own rather than the `@anywidget/types` package.)
 */

/** `change:<trait>` for each trait of a widget's state. */
export type ChangeEvent<State> = `change:${Extract<keyof State, string>}`;

export interface IWidgetModel<State> {
  get<K extends keyof State>(key: K): State[K];
  set<K extends keyof State>(key: K, value: State[K]): void;
  on(event: ChangeEvent<State>, callback: () => void): void;
  off(event: ChangeEvent<State>, callback: () => void): void;
  save_changes(): void;
  /** A custom message to the kernel (the widget's `on_msg` handler). */
  send(content: unknown): void;
}

export interface IRenderProps<State> {
  model: IWidgetModel<State>;
  el: HTMLElement;
}

/** What an anywidget ESM module exports as default. */
export interface IWidgetModule<State> {
  render(props: IRenderProps<State>): (() => void) | void;
}
