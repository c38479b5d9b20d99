/**
 * Layout for jsdom, which lays nothing out: a scroller's height and scroll
 * position, and the rows' heights, as a browser would report them.
 */

const original = Object.getOwnPropertyDescriptor(
  HTMLElement.prototype,
  'offsetHeight'
);

export const layout = {
  /** `node` shows `height` px and keeps the scroll position it is given. */
  view(node: HTMLElement, height: number): void {
    let scrollTop = 0;
    Object.defineProperty(node, 'clientHeight', {
      configurable: true,
      get: () => height
    });
    Object.defineProperty(node, 'scrollTop', {
      configurable: true,
      get: () => scrollTop,
      set: (value: number) => {
        scrollTop = Math.max(0, value);
      }
    });
  },

  /** Elements matching `selector` are `height(node)` px tall; the others 0. */
  rows(selector: string, height: (node: HTMLElement) => number): void {
    Object.defineProperty(HTMLElement.prototype, 'offsetHeight', {
      configurable: true,
      get(this: HTMLElement) {
        return this.matches(selector) ? height(this) : 0;
      }
    });
  },

  /** Back to jsdom's own (every height 0). */
  reset(): void {
    if (original) {
      Object.defineProperty(HTMLElement.prototype, 'offsetHeight', original);
    }
  }
};

/** After the next animation frame's callbacks. */
export function nextFrame(): Promise<void> {
  return new Promise(resolve => requestAnimationFrame(() => resolve()));
}
