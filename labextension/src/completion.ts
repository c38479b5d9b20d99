/**
 * One Tab inserts the only candidate in an `%mcp_*` magic: `%mcp_task demo:slow_compute sec` + Tab
 * writes `seconds=` at once, as a shell does. JupyterLab 4's completer opens its menu on the first
 * Tab whatever the number of candidates (a second Tab inserts); this watches the completer that a
 * Tab opened in a notebook cell whose cursor is in one of our magics and, when its menu holds one
 * item, selects it through JupyterLab's own command (`completer:select-notebook`, the Enter of the
 * menu). Elsewhere (Python code, other kernels' cells, the completions offered while typing when
 * the user turned them on) the completer is left as it is.
 */

/** The command that selects the completer's active item in the current notebook. */
export const SELECT_COMMAND = 'completer:select-notebook';
/** How long a Tab waits for its completer's menu (the kernel's answer) before it is let go. */
export const WAIT_MS = 5000;

// As the kernel's completer (mcp_tasks_jupyter/jupyter/completion.py): a line magic `%mcp_NAME `
// at the line's start or after a space, `=` or `(`; or any line of a `%%mcp_NAME` cell.
const LINE_MAGIC = /(?:^|[\s=(])%%?mcp_[a-z_]+\s/;
const CELL_MAGIC = /^%%mcp_[a-z_]+(\s|$)/;

const COMPLETER = 'jp-Completer';
const ITEM = 'jp-Completer-item';
const HIDDEN = 'lm-mod-hidden';

/** True when the cursor at `line`, `column` of a cell's `source` is inside an `%mcp_*` magic. */
export function inMagic(source: string, line: number, column: number): boolean {
  const lines = source.split('\n');
  if (line > 0 && CELL_MAGIC.test(lines[0])) {
    return true;
  }
  return LINE_MAGIC.test((lines[line] ?? '').slice(0, column));
}

/** What the watcher asks of the notebook it serves. */
export interface ICompletionSite {
  /** True when `target` (a key's target) is the active cell's editor with its cursor in a magic. */
  inMagic(target: EventTarget | null): boolean;
  /** Insert the completer's active item (run {@link SELECT_COMMAND}). */
  select(): void;
}

/**
 * Follows Tabs pressed in an `%mcp_*` magic; the menu such a Tab opens is taken at once when it
 * holds one item. Armed by the Tab, disarmed by the next key, the menu's showing, or {@link WAIT_MS}.
 */
export class SingleCandidate {
  constructor(
    private readonly site: ICompletionSite,
    private readonly root: HTMLElement = document.body
  ) {}

  /** Listen to the keys of `target` (the window in the front end); returns how to stop. */
  listen(
    target: Pick<Window, 'addEventListener' | 'removeEventListener'>
  ): () => void {
    const onKey = (event: Event): void =>
      this.onKeydown(event as KeyboardEvent);
    // Capture on the window: ahead of the completer's own capture listener on the document.
    target.addEventListener('keydown', onKey, true);
    return () => {
      target.removeEventListener('keydown', onKey, true);
      this.disarm();
    };
  }

  /** A key went down (only a plain Tab in a magic, with no menu on show, arms the watch). */
  onKeydown(event: KeyboardEvent): void {
    if (['Shift', 'Control', 'Alt', 'Meta'].includes(event.key)) {
      return;
    }
    this.disarm();
    const plainTab =
      event.key === 'Tab' &&
      !event.shiftKey &&
      !event.ctrlKey &&
      !event.altKey &&
      !event.metaKey;
    if (plainTab && !this.menuOnShow() && this.site.inMagic(event.target)) {
      this.arm();
    }
  }

  /** True while a Tab waits for its menu. */
  get armed(): boolean {
    return this.observer !== null;
  }

  private arm(): void {
    const observer = new MutationObserver(() => this.check());
    // A completer is attached to the body (a new one per notebook); its items are redrawn inside it.
    observer.observe(this.root, { childList: true });
    for (const node of this.completers()) {
      observer.observe(node, {
        childList: true,
        subtree: true,
        attributes: true,
        attributeFilter: ['class']
      });
    }
    this.observer = observer;
    this.timer = setTimeout(() => this.disarm(), WAIT_MS);
  }

  private disarm(): void {
    this.observer?.disconnect();
    this.observer = null;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  private check(): void {
    const menu = this.menuOnShow();
    if (!menu) {
      // A completer attached since the Tab: watch it too.
      for (const node of this.completers()) {
        this.observer?.observe(node, {
          childList: true,
          subtree: true,
          attributes: true,
          attributeFilter: ['class']
        });
      }
      return;
    }
    const items = menu.getElementsByClassName(ITEM).length;
    if (items === 0) {
      return; // being drawn
    }
    this.disarm();
    if (items === 1) {
      this.site.select();
    }
  }

  private completers(): HTMLElement[] {
    return Array.from(this.root.children).filter(
      (node): node is HTMLElement =>
        node instanceof HTMLElement && node.classList.contains(COMPLETER)
    );
  }

  private menuOnShow(): HTMLElement | null {
    return (
      this.completers().find(node => !node.classList.contains(HIDDEN)) ?? null
    );
  }

  private observer: MutationObserver | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
}
