/**
 * The part of anywidget's front-end API the widgets use, typed by the state a
 * widget's Python class syncs (its traits). anywidget calls `render` with the
 * widget's model and the element to draw in; `render` may return a cleanup.
 * (A small interface of our own rather than the `@anywidget/types` package.)
 */

/** `change:<trait>` for each trait of a widget's state. */
export type ChangeEvent<State> = `change:${Extract<keyof State, string>}`;

/** A custom message from the kernel (the widget's `send`): its content. */
export type CustomListener = (content: unknown) => void;

export interface IWidgetModel<State> {
  get<K extends keyof State>(key: K): State[K];
  set<K extends keyof State>(key: K, value: State[K]): void;
  on(event: ChangeEvent<State>, callback: () => void): void;
  on(event: 'msg:custom', callback: CustomListener): void;
  off(event: ChangeEvent<State>, callback: () => void): void;
  off(event: 'msg:custom', callback: CustomListener): void;
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
  /** Once per model, before any view (and with no view on screen). */
  initialize?(props: { model: IWidgetModel<State> }): (() => void) | void;
  render(props: IRenderProps<State>): (() => void) | void;
}
