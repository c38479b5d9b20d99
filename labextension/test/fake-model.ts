/**
 * A stand-in for anywidget's model in unit tests: the same methods, state kept
 * in a plain object, `set` emitting `change:<key>` at once (as Backbone does),
 * and every custom message the view sends kept in `sent`.
 */

import type {
  ChangeEvent,
  CustomListener,
  IWidgetModel,
  IWidgetModule
} from '../src/widgets/anywidget';

export class FakeModel<State extends object> implements IWidgetModel<State> {
  constructor(state: State) {
    this.state = { ...state };
  }

  readonly state: State;
  readonly sent: unknown[] = [];
  saves = 0;

  get<K extends keyof State>(key: K): State[K] {
    return this.state[key];
  }

  set<K extends keyof State>(key: K, value: State[K]): void {
    this.state[key] = value;
    for (const callback of [
      ...(this._listeners.get(`change:${String(key)}`) ?? [])
    ]) {
      callback(undefined);
    }
  }

  /** Several traits at once, as one message from the kernel brings them. */
  update(patch: Partial<State>): void {
    for (const key of Object.keys(patch) as (keyof State)[]) {
      this.set(key, patch[key] as State[keyof State]);
    }
  }

  on(event: ChangeEvent<State>, callback: () => void): void;
  on(event: 'msg:custom', callback: CustomListener): void;
  on(event: string, callback: CustomListener): void {
    const list = this._listeners.get(event) ?? new Set();
    list.add(callback);
    this._listeners.set(event, list);
  }

  off(event: ChangeEvent<State>, callback: () => void): void;
  off(event: 'msg:custom', callback: CustomListener): void;
  off(event: string, callback: CustomListener): void {
    this._listeners.get(event)?.delete(callback);
  }

  /** A custom message from the kernel. */
  receive(content: unknown): void {
    for (const callback of [...(this._listeners.get('msg:custom') ?? [])]) {
      callback(content);
    }
  }

  save_changes(): void {
    this.saves++;
  }

  send(content: unknown): void {
    this.sent.push(content);
  }

  /** How many listeners are registered now (0 once a view cleaned up). */
  get listenerCount(): number {
    let n = 0;
    for (const list of this._listeners.values()) {
      n += list.size;
    }
    return n;
  }

  private _listeners = new Map<string, Set<CustomListener>>();
}

/** A widget rendered into a fresh element attached to the document. */
export function mount<State extends object>(
  module: IWidgetModule<State>,
  state: State
): { model: FakeModel<State>; el: HTMLElement; cleanup: () => void } {
  const model = new FakeModel(state);
  const el = document.createElement('div');
  document.body.append(el);
  const cleanup = module.render({ model, el }) ?? (() => undefined);
  return {
    model,
    el,
    cleanup: () => {
      cleanup();
      el.remove();
    }
  };
}

/** Let queued microtasks (the views' coalesced redraws) run. */
export async function settle(): Promise<void> {
  await Promise.resolve();
  await Promise.resolve();
}

/** The element matching `selector` in `root`; fails the test when there is none. */
export function one<E extends Element = HTMLElement>(
  root: ParentNode,
  selector: string
): E {
  const found = root.querySelector<E>(selector);
  if (!found) {
    throw new Error(`nothing matches ${selector}`);
  }
  return found;
}

/** The texts of the elements matching `selector`. */
export function texts(root: ParentNode, selector: string): string[] {
  return [...root.querySelectorAll(selector)].map(
    node => node.textContent ?? ''
  );
}
