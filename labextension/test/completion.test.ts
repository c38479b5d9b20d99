import { afterEach, describe, expect, it, vi } from 'vitest';

import { inMagic, SingleCandidate, WAIT_MS } from '../src/completion';

describe('a cursor in an %mcp_* magic', () => {
  const at = (line: string): boolean => inMagic(line, 0, line.length);

  it('is where the kernel completes one of our magics', () => {
    expect(at('%mcp_task demo:slow_compute sec')).toBe(true);
    expect(at('h = %mcp_task demo:slo')).toBe(true);
    expect(at('%mcp_cancel ')).toBe(true);
    expect(at('print(%mcp_result demo:')).toBe(true);
    // the body of a %%mcp_task cell
    expect(inMagic('%%mcp_task demo:slow_compute\nsec', 1, 3)).toBe(true);
    // the cursor in a second line that is a magic, under Python code
    expect(inMagic('x = 1\n%mcp_task demo:', 1, 15)).toBe(true);
  });

  it('is not Python code, the magic name being typed, or text after the cursor', () => {
    expect(at('print(sec')).toBe(false);
    expect(at('%mcp_tas')).toBe(false);
    expect(at('x%mcp_task demo:')).toBe(false);
    expect(at('%time x')).toBe(false);
    expect(inMagic('pri %mcp_task demo:', 0, 3)).toBe(false);
    // %%mcp_task's first line holds the magic, other cells' first lines do not
    expect(inMagic('%%time\nsec', 1, 3)).toBe(false);
    expect(inMagic('%%mcp_task demo:x', 0, 3)).toBe(false);
  });
});

/** A completer's menu as JupyterLab draws it: a hidden ul on the body, its items inside. */
function completer(root: HTMLElement): HTMLElement {
  const node = document.createElement('div');
  node.className = 'jp-Completer lm-mod-hidden';
  root.append(node);
  return node;
}

function show(menu: HTMLElement, labels: string[]): void {
  const list = document.createElement('ul');
  for (const label of labels) {
    const item = document.createElement('li');
    item.className = 'jp-Completer-item';
    item.dataset.value = label;
    list.append(item);
  }
  menu.replaceChildren(list);
  menu.classList.remove('lm-mod-hidden');
}

const tab = (init: KeyboardEventInit = {}): KeyboardEvent =>
  new KeyboardEvent('keydown', { key: 'Tab', ...init });
const settle = (): Promise<void> => new Promise(r => setTimeout(r, 0));

describe('one Tab in a magic', () => {
  let root: HTMLElement;
  const make = (magic = true) => {
    root = document.createElement('div');
    document.body.append(root);
    const site = { inMagic: vi.fn(() => magic), select: vi.fn() };
    return { site, watcher: new SingleCandidate(site, root) };
  };
  afterEach(() => {
    root.remove();
    vi.useRealTimers();
  });

  it('takes the menu it opened when the menu holds one item', async () => {
    const { site, watcher } = make();
    const menu = completer(root);
    watcher.onKeydown(tab());
    expect(watcher.armed).toBe(true);
    show(menu, ['seconds=']);
    await settle();
    expect(site.select).toHaveBeenCalledTimes(1);
    expect(watcher.armed).toBe(false);
  });

  it('leaves a menu of several items open', async () => {
    const { site, watcher } = make();
    const menu = completer(root);
    watcher.onKeydown(tab());
    show(menu, ['seconds=', 'steps=']);
    await settle();
    expect(site.select).not.toHaveBeenCalled();
    expect(watcher.armed).toBe(false);
  });

  it('follows a completer attached after the Tab', async () => {
    const { site, watcher } = make();
    watcher.onKeydown(tab());
    const menu = completer(root);
    await settle();
    show(menu, ['label=']);
    await settle();
    expect(site.select).toHaveBeenCalledTimes(1);
  });

  it('leaves other code, other keys, a menu on show and a late menu alone', async () => {
    // a Tab outside our magics
    let { site, watcher } = make(false);
    let menu = completer(root);
    watcher.onKeydown(tab());
    expect(watcher.armed).toBe(false);
    show(menu, ['print']);
    await settle();
    expect(site.select).not.toHaveBeenCalled();
    root.remove();

    // a key typed after the Tab: the menu that comes is the user's to read
    ({ site, watcher } = make());
    menu = completer(root);
    watcher.onKeydown(tab());
    watcher.onKeydown(new KeyboardEvent('keydown', { key: 'x' }));
    show(menu, ['seconds=']);
    await settle();
    expect(site.select).not.toHaveBeenCalled();

    // Tab with the menu open cycles through it (the completer's own key); Shift+Tab is no Tab
    watcher.onKeydown(tab());
    expect(watcher.armed).toBe(false);
    menu.classList.add('lm-mod-hidden');
    watcher.onKeydown(tab({ shiftKey: true }));
    expect(watcher.armed).toBe(false);
    // Shift alone, on the way to a Shift+Tab, disarms nothing
    watcher.onKeydown(tab());
    watcher.onKeydown(new KeyboardEvent('keydown', { key: 'Shift' }));
    expect(watcher.armed).toBe(true);
    root.remove();

    // no menu within the bound: let go
    vi.useFakeTimers();
    ({ watcher } = make());
    completer(root);
    watcher.onKeydown(tab());
    vi.advanceTimersByTime(WAIT_MS + 1);
    expect(watcher.armed).toBe(false);
  });

  it('listens on the window ahead of the completer, and stops', () => {
    const { site, watcher } = make();
    const stop = watcher.listen(window);
    const inside = document.createElement('div');
    root.append(inside);
    inside.dispatchEvent(tab({ bubbles: true }));
    expect(site.inMagic).toHaveBeenCalledWith(inside);
    expect(watcher.armed).toBe(true);
    stop();
    expect(watcher.armed).toBe(false);
    inside.dispatchEvent(tab({ bubbles: true }));
    expect(site.inMagic).toHaveBeenCalledTimes(1);
  });
});
