/** What the task and board views share: the kernel's clock, coalesced redraws, one redraw per frame. */

import type { IWidgetModel } from './anywidget';

export interface IClockState {
  /** The kernel's clock (epoch s) when it sent this state. */
  sent_at: number;
}

/**
 * The kernel's clock as seen from here. Only a live update says what the
 * kernel's clock reads now (a state restored with the notebook may be old), so
 * the offset is learnt from `change:sent_at` only.
 */
export class KernelClock {
  constructor(private readonly _model: IWidgetModel<IClockState>) {
    _model.on('change:sent_at', this._onSentAt);
  }

  /** Epoch seconds on the kernel's clock. */
  now(): number {
    return Date.now() / 1000 + this._offset;
  }

  dispose(): void {
    this._model.off('change:sent_at', this._onSentAt);
  }

  /** What the kernel's clock read when it sent a message that came just now. */
  learn(sentAt: unknown): void {
    if (typeof sentAt === 'number' && Number.isFinite(sentAt)) {
      this._offset = sentAt - Date.now() / 1000;
    }
  }

  private _onSentAt = (): void => {
    this.learn(this._model.get('sent_at'));
  };

  /** Kernel clock minus browser clock, seconds. */
  private _offset = 0;
}

/** `fn` once per microtask however often the returned function is called (one redraw per burst). */
export function coalesced(fn: () => void): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) {
      return;
    }
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      fn();
    });
  };
}

/**
 * Keep a view current: `update` (coalesced) on every change of `traits` and once now, `tick` once a
 * second (elapsed times). The returned cleanup stops both and disposes `clock`.
 */
export function follow<State>(
  model: IWidgetModel<State>,
  traits: readonly Extract<keyof State, string>[],
  update: () => void,
  tick: () => void,
  clock: KernelClock
): () => void {
  const schedule = coalesced(update);
  for (const name of traits) {
    model.on(`change:${name}`, schedule);
  }
  update();
  const timer = setInterval(tick, 1000);
  return () => {
    clearInterval(timer);
    for (const name of traits) {
      model.off(`change:${name}`, schedule);
    }
    clock.dispose();
  };
}

/** The badge class of a status: `mtj-s-<status>`, letters and `_` only. */
export function statusClass(status: string): string {
  return `mtj-s-${String(status).replace(/[^a-z_]/gi, '')}`;
}

/** `fn` at the next animation frame, once however often it is requested (or at once: `flush`). */
export class FrameRequest {
  constructor(private readonly _fn: () => void) {}

  readonly request = (): void => {
    if (this._id === null) {
      this._id = requestAnimationFrame(() => {
        this._id = null;
        this._fn();
      });
    }
  };

  flush(): void {
    this.cancel();
    this._fn();
  }

  cancel(): void {
    if (this._id !== null) {
      cancelAnimationFrame(this._id);
      this._id = null;
    }
  }

  private _id: number | null = null;
}
