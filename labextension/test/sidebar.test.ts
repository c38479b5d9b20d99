/**
 * The side panel with a thousand tasks, fed by the real store and registry
 * over a stand-in kernel connection (`fake-kernel.ts`); jsdom's missing layout
 * is given by `layout.ts` (a 300 px list of 50 px rows).
 */

import './browser-shims';

import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { CellLocator } from '../src/cells';
import { EMPTY_TEXT, TasksSidebar } from '../src/sidebar';
import { TaskRegistry } from '../src/registry';
import { OVERSCAN } from '../src/virtuallist';
import { FakeKernel } from './fake-kernel';
import { layout, nextFrame } from './layout';

// The panel's tab icon (@jupyterlab/ui-components, which cannot load in jsdom) plays no part here.
vi.mock('../src/icon', () => ({ tasksIcon: undefined }));

const VIEW = 300;
const ROW = 50;

/** Task `i` of `n`: started at `i` (so the newest, `t{n-1}`, comes first). */
function task(i: number, patch: Record<string, unknown> = {}): unknown {
  return {
    key: `t${i}`,
    server: 'demo',
    status: 'working',
    started: 1000 + i,
    tool: 'slow_compute',
    label: `label=t${i}`,
    message: `step 1: t${i}`,
    ...patch
  };
}

function setUp(n: number): {
  sidebar: TasksSidebar;
  kernel: FakeKernel;
  list: HTMLElement;
  shown: () => string[];
} {
  const kernel = new FakeKernel('k1');
  const session = { kernel: kernel.connection };
  const panel = {
    sessionContext: { session, kernelChanged: new Signal({}) },
    title: { label: 'fleet.ipynb', changed: new Signal({}) },
    disposed: new Signal({}),
    isDisposed: false
  } as unknown as NotebookPanel;
  const tracker = {
    currentWidget: panel,
    currentChanged: new Signal({})
  } as unknown as INotebookTracker;
  const locator = { reveal: async () => undefined } as unknown as CellLocator;
  const registry = new TaskRegistry();
  const sidebar = new TasksSidebar({ registry, tracker, locator });
  document.body.append(sidebar.node);
  const list = sidebar.node.querySelector<HTMLElement>('.mtj-task-list');
  if (!list) {
    throw new Error('no list');
  }
  layout.view(list, VIEW);
  kernel.last.receive({
    type: 'snapshot',
    tasks: Array.from({ length: n }, (_, i) => task(i))
  });
  const shown = (): string[] =>
    [...list.querySelectorAll<HTMLElement>('.mtj-task-row')].map(
      row => row.dataset.key as string
    );
  return { sidebar, kernel, list, shown };
}

function newest(n: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `t${n - 1 - i}`);
}

describe('the side panel with many tasks', () => {
  beforeEach(() => layout.rows('.mtj-task-row', () => ROW));
  afterEach(() => {
    layout.reset();
    document.body.replaceChildren();
  });

  it('has only the rows in view (and a few more) in the DOM, newest first', () => {
    const { shown } = setUp(1000);
    expect(shown()).toEqual(newest(1000, VIEW / ROW + OVERSCAN));
  });

  it('draws the next rows when scrolled', async () => {
    const { list, shown } = setUp(1000);
    list.scrollTop = 600 * ROW;
    list.dispatchEvent(new Event('scroll'));
    await nextFrame();
    const keys = shown();
    expect(keys).toContain(`t${999 - 600}`);
    expect(keys).not.toContain('t999');
    expect(keys.length).toBeLessThanOrEqual(VIEW / ROW + 2 * OVERSCAN + 1);
  });

  it('filters over every task, not only the rows drawn', () => {
    const { sidebar, kernel, shown } = setUp(1000);
    // Three old tasks, far below the view, complete.
    kernel.last.receive({
      type: 'update',
      tasks: [3, 5, 7].map(i =>
        task(i, { status: 'completed', finished: 2000 })
      ),
      removed: []
    });
    const filter =
      sidebar.node.querySelector<HTMLSelectElement>('.mtj-status-filter');
    if (!filter) {
      throw new Error('no filter');
    }
    filter.value = 'completed';
    filter.dispatchEvent(new Event('change'));
    expect(shown()).toEqual(['t7', 't5', 't3']);
    filter.value = 'failed';
    filter.dispatchEvent(new Event('change'));
    expect(shown()).toEqual([]);
    const empty = sidebar.node.querySelector<HTMLElement>('.mtj-empty');
    expect(empty?.textContent).toBe(EMPTY_TEXT.noMatch);
    expect(empty?.hidden).toBe(false);
    filter.value = 'all';
    filter.dispatchEvent(new Event('change'));
    expect(shown()).toEqual(newest(1000, VIEW / ROW + OVERSCAN));
    expect(empty?.hidden).toBe(true);
  });

  it('draws the changes of many messages once, at the next animation frame', async () => {
    const { kernel, list } = setUp(1000);
    const message = (): string | null | undefined =>
      list.querySelector('[data-key="t999"] .mtj-task-message')?.textContent;
    for (let step = 2; step <= 4; step++) {
      kernel.last.receive({
        type: 'update',
        tasks: [task(999, { message: `step ${step}: t999` })],
        removed: []
      });
    }
    expect(message()).toBe('step 1: t999');
    await nextFrame();
    expect(message()).toBe('step 4: t999');
  });

  it('moves the focus with the keys, drawing the rows it reaches', () => {
    const { list, shown } = setUp(1000);
    const first = list.querySelector<HTMLElement>('.mtj-task-row');
    first?.focus();
    first?.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'End', bubbles: true })
    );
    expect(shown()).toContain('t0');
    expect(document.activeElement?.getAttribute('data-key')).toBe('t0');
    document.activeElement?.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'ArrowUp', bubbles: true })
    );
    expect(document.activeElement?.getAttribute('data-key')).toBe('t1');
    document.activeElement?.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Home', bubbles: true })
    );
    expect(document.activeElement?.getAttribute('data-key')).toBe('t999');
  });
});
