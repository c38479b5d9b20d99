/**
 * A virtualized list: of an ordered list of keys, only the rows in view (and a
 * few beyond each edge) are in the DOM; two spacers stand for the rest, so the
 * scrollbar reads as if every row were there. Rows may differ in height: each
 * drawn row is measured after it is drawn, and a row never drawn counts as the
 * average of those measured.
 *
 * Hand-written rather than a dependency: JupyterLab's own `WindowedList` wants
 * a Lumino widget per row (and its API moved between 4.x releases), and
 * `@tanstack/virtual-core` has no plain-DOM adapter (its mount hooks are
 * private). This is the small part of either the side panel needs.
 *
 * The list owns the scroller's children between its spacers. The caller says
 * which keys to show, in order (`setKeys`, over its model, never the DOM), and
 * which changed (`invalidate`); redraws are coalesced to one per animation
 * frame (`schedule`), or done at once (`render`).
 *
 * The side panel's list is the plain case: rows are the scroller's children,
 * two spacer elements around them. The board's table (`widgets/boardtable.ts`)
 * sets the options a table needs: its rows go into a `container` (the
 * `tbody`), the rows not drawn are given as the table's margins (`space`), the
 * head above them is skipped (`lead`), rows that leave the view lend their
 * elements to those that come in (`IRowRenderer.recycle`), and a page not laid
 * out yet is drawn whole (`wholeWhileHidden`).
 */

/** Draws one row; the list decides when. */
export interface IRowRenderer<R extends { readonly node: HTMLElement }> {
  /** A new row for `key`, drawn from the model (null: the model no longer has it, skip it). */
  create(key: string): R | null;
  /** Bring a row on screen up to date with the model. */
  update(row: R, key: string): void;
  /**
   * Draw `key` into `row`, which left the view (instead of `create`): for rows
   * costly to build. Without it, rows that leave are dropped.
   */
  recycle?(row: R, key: string): void;
}

export interface IVirtualListOptions<R extends { readonly node: HTMLElement }> {
  /** The scrolling element (`overflow-y: auto`); the list owns its children. */
  scroller: HTMLElement;
  renderer: IRowRenderer<R>;
  /** A row's height in px before any row was measured. */
  estimate: number;
  /** Rows drawn beyond each edge of the view (default `OVERSCAN`). */
  overscan?: number;
  /** Where the rows go (default: the scroller itself, between two spacers). */
  container?: HTMLElement;
  /**
   * How the rows not drawn are stood for, px above and below the drawn ones
   * (default: the heights of the two spacers). A table gives its margins.
   */
  space?: (above: number, below: number) => void;
  /** Px of the scroller's content above the first row (a table's sticky head); default none. */
  lead?: () => number;
  /** Each row says where it is (`aria-posinset`, `aria-setsize`: a list's rows; default true). */
  positions?: boolean;
  /** While the scroller has no height (not laid out yet), draw every row: for a short list. */
  wholeWhileHidden?: boolean;
}

/** Rows drawn above and below the view, so that a short scroll shows no gap. */
export const OVERSCAN = 4;

export class VirtualList<R extends { readonly node: HTMLElement }> {
  constructor(options: IVirtualListOptions<R>) {
    this._scroller = options.scroller;
    this._renderer = options.renderer;
    this._estimate = options.estimate;
    this._overscan = options.overscan ?? OVERSCAN;
    this._container = options.container ?? this._scroller;
    this._lead = options.lead ?? (() => 0);
    this._positions = options.positions ?? true;
    this._wholeWhileHidden = options.wholeWhileHidden ?? false;
    if (options.space) {
      this._space = options.space;
    } else {
      const before = spacer('before');
      const after = spacer('after');
      this._container.append(before, after);
      this._first = before;
      this._space = (above, below) => {
        setHeight(before, above);
        setHeight(after, below);
      };
    }
    this._scroller.addEventListener('scroll', this._onScroll, {
      passive: true
    });
  }

  /** The keys shown, in order. */
  get keys(): readonly string[] {
    return this._keys;
  }

  /** The rows in the DOM now, by key. */
  get drawn(): ReadonlyMap<string, R> {
    return this._drawn;
  }

  /** What to show, in order; drawn rows whose key is gone leave the DOM at the next render. */
  setKeys(keys: readonly string[]): void {
    this._keys = keys;
    this._index = null;
  }

  /** These rows changed: a drawn one is updated (and measured again) at the next render. */
  invalidate(keys: Iterable<string>): void {
    for (const key of keys) {
      if (this._drawn.has(key)) {
        this._stale.add(key);
      }
    }
  }

  /** Every drawn row is updated at the next render; every height is measured again. */
  invalidateAll(): void {
    for (const key of this._drawn.keys()) {
      this._stale.add(key);
    }
    this._heights.clear();
    this._measuredSum = 0;
  }

  /** Render at the next animation frame (once, however often it is asked). */
  schedule(): void {
    if (this._frame === null && !this._disposed) {
      this._frame = requestAnimationFrame(() => {
        this._frame = null;
        this.render();
      });
    }
  }

  /** Draw the rows in view now (and drop the others). */
  render(): void {
    if (this._disposed) {
      return;
    }
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
      this._frame = null;
    }
    const anchor = this._anchor();
    this._draw();
    if (this._measure()) {
      // Heights changed: keep the row at the top of the view where it was, then draw again.
      if (anchor) {
        const moved = this.offsetOf(anchor.key) - anchor.offset;
        if (moved !== 0 && this._scroller.scrollTop > 0) {
          this._scroller.scrollTop += moved;
        }
      }
      this._draw();
      this._measure();
    }
  }

  /** Top of the row of `key` from the top of the list, px (measured or estimated rows above it). */
  offsetOf(key: string): number {
    const index = this.indexOf(key);
    let offset = 0;
    for (let i = 0; i < index; i++) {
      offset += this._height(this._keys[i]);
    }
    return offset;
  }

  /** The position of `key` among the keys shown, -1 if it is not shown. */
  indexOf(key: string): number {
    if (!this._index) {
      this._index = new Map(this._keys.map((k, i) => [k, i]));
    }
    return this._index.get(key) ?? -1;
  }

  /** Scroll just enough that the row of `key` is in view, draw, and return it (null if not shown). */
  scrollToKey(key: string): R | null {
    if (this.indexOf(key) < 0) {
      return null;
    }
    const lead = this._lead();
    const top = this.offsetOf(key);
    const bottom = top + this._height(key);
    const view = this._scroller.clientHeight;
    const scrollTop = this._top();
    if (top < scrollTop) {
      this._scroller.scrollTop = top + lead;
    } else if (bottom > scrollTop + view) {
      this._scroller.scrollTop = Math.max(0, bottom - view + lead);
    }
    this.render();
    return this._drawn.get(key) ?? null;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
      this._frame = null;
    }
    this._scroller.removeEventListener('scroll', this._onScroll);
  }

  private _onScroll = (): void => this.schedule();

  /** Where the view starts, px from the top of the first row. */
  private _top(): number {
    return this._scroller.scrollTop - this._lead();
  }

  private _height(key: string): number {
    return this._heights.get(key) ?? this._average();
  }

  private _average(): number {
    return this._heights.size
      ? this._measuredSum / this._heights.size
      : this._estimate;
  }

  /** The first row in view and its offset, to hold it in place while heights change. */
  private _anchor(): { key: string; offset: number } | null {
    const scrollTop = this._top();
    let offset = 0;
    for (const key of this._keys) {
      const height = this._height(key);
      if (offset + height > scrollTop) {
        return { key, offset };
      }
      offset += height;
    }
    return null;
  }

  /** `[start, end]`: the rows of the window, overscan included. */
  private _window(): [number, number] {
    const keys = this._keys;
    const view = this._scroller.clientHeight;
    if (this._wholeWhileHidden && view <= 0) {
      return [0, keys.length - 1];
    }
    const scrollTop = this._top();
    const bottom = scrollTop + view;
    let offset = 0;
    let first = keys.length;
    let last = keys.length - 1;
    for (let i = 0; i < keys.length; i++) {
      const height = this._height(keys[i]);
      if (first === keys.length && offset + height > scrollTop) {
        first = i;
      }
      if (offset >= bottom && first < keys.length) {
        last = i - 1;
        break;
      }
      offset += height;
    }
    if (first === keys.length) {
      // Scrolled past the end (the list got shorter): show its last rows.
      first = Math.max(0, keys.length - 1);
    }
    const start = Math.max(0, first - this._overscan);
    const end = Math.min(
      keys.length - 1,
      Math.max(last, first) + this._overscan
    );
    return [start, end];
  }

  /** Put the rows of the window in the DOM, in order (between the spacers). */
  private _draw(): void {
    const keys = this._keys;
    const [start, end] = this._window();
    const wanted = new Set<string>();
    for (let i = start; i <= end; i++) {
      wanted.add(keys[i]);
    }
    // Rows that leave: dropped, or kept for the rows that come in when the renderer recycles.
    const free: R[] = [];
    for (const [key, row] of this._drawn) {
      if (!wanted.has(key)) {
        if (this._renderer.recycle) {
          free.push(row);
        } else {
          this._drop(row);
        }
        this._drawn.delete(key);
        this._stale.delete(key);
      }
    }
    let cursor: ChildNode | null = this._first
      ? this._first.nextSibling
      : this._container.firstChild;
    for (let i = start; i <= end; i++) {
      const key = keys[i];
      let row = this._drawn.get(key);
      if (!row) {
        const made = this._make(key, free);
        if (!made) {
          continue;
        }
        row = made;
        this._drawn.set(key, row);
      } else if (this._stale.has(key)) {
        this._renderer.update(row, key);
      }
      this._stale.delete(key);
      const node = row.node;
      if (this._positions) {
        setAttr(node, 'aria-posinset', String(i + 1));
        setAttr(node, 'aria-setsize', String(keys.length));
      }
      if (node === cursor) {
        cursor = cursor.nextSibling;
      } else {
        this._container.insertBefore(node, cursor);
      }
    }
    for (const row of free) {
      this._drop(row);
    }
    let above = 0;
    for (let i = 0; i < start; i++) {
      above += this._height(keys[i]);
    }
    let below = 0;
    for (let i = end + 1; i < keys.length; i++) {
      below += this._height(keys[i]);
    }
    this._space(above, below);
  }

  /** A row for `key`: one that left the view, drawn again, or a new one. */
  private _make(key: string, free: R[]): R | null {
    const spare = this._renderer.recycle ? free.pop() : undefined;
    if (spare && this._renderer.recycle) {
      this._renderer.recycle(spare, key);
      return spare;
    }
    return this._renderer.create(key);
  }

  /** Read the drawn rows' heights; whether any changed. */
  private _measure(): boolean {
    let changed = false;
    for (const [key, row] of this._drawn) {
      const height = row.node.offsetHeight;
      if (height <= 0) {
        continue; // not laid out (the panel is hidden)
      }
      const old = this._heights.get(key);
      if (old !== height) {
        this._measuredSum += height - (old ?? 0);
        this._heights.set(key, height);
        changed = true;
      }
    }
    return changed;
  }

  /** Take a row out of the DOM; if it had the focus, the scroller takes it (keys still work). */
  private _drop(row: R): void {
    const node = row.node;
    if (node.contains(document.activeElement)) {
      this._scroller.focus({ preventScroll: true });
    }
    node.remove();
  }

  private _scroller: HTMLElement;
  private _renderer: IRowRenderer<R>;
  private _estimate: number;
  private _overscan: number;
  private _container: HTMLElement;
  private _lead: () => number;
  private _positions: boolean;
  private _wholeWhileHidden: boolean;
  private _space: (above: number, below: number) => void;
  /** The spacer before the rows (none when the caller gives the space). */
  private _first: HTMLElement | null = null;
  private _keys: readonly string[] = [];
  private _index: Map<string, number> | null = null;
  private _drawn = new Map<string, R>();
  private _stale = new Set<string>();
  private _heights = new Map<string, number>();
  private _measuredSum = 0;
  private _frame: number | null = null;
  private _disposed = false;
}

function spacer(which: string): HTMLDivElement {
  const node = document.createElement('div');
  node.className = `mtj-vlist-spacer mtj-vlist-${which}`;
  node.setAttribute('aria-hidden', 'true');
  return node;
}

function setHeight(node: HTMLElement, px: number): void {
  const value = `${Math.round(px)}px`;
  if (node.style.height !== value) {
    node.style.height = value;
  }
}

function setAttr(node: HTMLElement, name: string, value: string): void {
  if (node.getAttribute(name) !== value) {
    node.setAttribute(name, value);
  }
}
