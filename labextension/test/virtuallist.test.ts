/**
 * The virtualized list in jsdom. jsdom lays nothing out, so the scroller's
 * height and the rows' heights are given here (`layout`); everything else is
 * the list's own work.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { IRowRenderer, OVERSCAN, VirtualList } from '../src/virtuallist';
import { layout, nextFrame } from './layout';

interface IRow {
  readonly node: HTMLElement;
  key: string;
  updates: number;
}

function keys(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `k${i}`);
}

function setUp(
  count: number,
  view = 200
): {
  list: VirtualList<IRow>;
  scroller: HTMLElement;
  created: string[];
  rowKeys: () => string[];
} {
  const scroller = document.createElement('div');
  document.body.append(scroller);
  layout.view(scroller, view);
  const created: string[] = [];
  const renderer: IRowRenderer<IRow> = {
    create: key => {
      created.push(key);
      const node = document.createElement('div');
      node.className = 'row';
      node.dataset.key = key;
      node.textContent = key;
      return { node, key, updates: 0 };
    },
    update: row => {
      row.updates++;
    }
  };
  const list = new VirtualList<IRow>({ scroller, renderer, estimate: 40 });
  list.setKeys(keys(count));
  list.render();
  const rowKeys = (): string[] =>
    [...scroller.querySelectorAll<HTMLElement>('.row')].map(
      n => n.dataset.key as string
    );
  return { list, scroller, created, rowKeys };
}

describe('a virtualized list', () => {
  beforeEach(() => layout.rows('.row', () => 40));
  afterEach(() => {
    layout.reset();
    document.body.replaceChildren();
  });

  it('puts only the rows in view and a few more in the DOM', () => {
    const { scroller, rowKeys } = setUp(1000);
    // 200 px of 40 px rows: 5 in view, then the overscan below (none above the first).
    expect(rowKeys()).toEqual(keys(5 + OVERSCAN));
    const [before, after] =
      scroller.querySelectorAll<HTMLElement>('.mtj-vlist-spacer');
    expect(before.style.height).toBe('0px');
    expect(after.style.height).toBe(`${(1000 - 5 - OVERSCAN) * 40}px`);
    const rows = scroller.querySelectorAll('.row');
    expect(rows[0].getAttribute('aria-posinset')).toBe('1');
    expect(rows[0].getAttribute('aria-setsize')).toBe('1000');
  });

  it('draws the next rows when scrolled, and drops those scrolled away', async () => {
    const { scroller, rowKeys, created } = setUp(1000);
    scroller.scrollTop = 500 * 40;
    scroller.dispatchEvent(new Event('scroll'));
    expect(rowKeys()).toContain('k0'); // not before the next frame
    await nextFrame();
    const first = 500 - OVERSCAN;
    const last = 500 + 4 + OVERSCAN;
    expect(rowKeys()).toEqual(keys(last + 1).slice(first));
    expect(rowKeys()).not.toContain('k0');
    expect(created.length).toBeLessThan(40);
    const before = scroller.querySelector<HTMLElement>('.mtj-vlist-before');
    expect(before?.style.height).toBe(`${first * 40}px`);
  });

  it('updates only the rows drawn when rows change', () => {
    const { list } = setUp(1000);
    list.invalidate(['k1', 'k700']);
    list.render();
    expect(list.drawn.get('k1')?.updates).toBe(1);
    expect(list.drawn.get('k2')?.updates).toBe(0);
    expect(list.drawn.has('k700')).toBe(false);
  });

  it('shows whatever keys it is given, in their order (a filter over the model)', () => {
    const { list, rowKeys } = setUp(1000);
    list.setKeys(['k999', 'k500', 'k3']);
    list.render();
    expect(rowKeys()).toEqual(['k999', 'k500', 'k3']);
    list.setKeys([]);
    list.render();
    expect(rowKeys()).toEqual([]);
  });

  it('measures rows of other heights and keeps the row at the top of the view in place', () => {
    layout.rows('.row', node => (node.dataset.key === 'k497' ? 140 : 40));
    const { list, scroller } = setUp(1000);
    scroller.scrollTop = 500 * 40; // k500 at the top; k497, drawn above it, turns out 140 px tall
    list.render();
    expect(list.offsetOf('k498') - list.offsetOf('k497')).toBe(140);
    // The rows never drawn count as the average of those measured, which moved too: the view
    // follows k500 wherever the offsets put it.
    expect(scroller.scrollTop).toBeCloseTo(list.offsetOf('k500'));
    expect(list.drawn.has('k500')).toBe(true);
  });

  it('scrolls a row far away into view and draws it', () => {
    const { list, scroller } = setUp(1000);
    const row = list.scrollToKey('k800');
    expect(row?.node.isConnected).toBe(true);
    expect(scroller.scrollTop).toBe(801 * 40 - 200);
    expect(list.scrollToKey('nowhere')).toBeNull();
  });
});

/** The board's use: a table whose body holds the rows, its margins the rest, under a 30 px head. */
function setUpTable(
  count: number,
  view: number | null = 200
): {
  list: VirtualList<IRow>;
  scroller: HTMLElement;
  table: HTMLTableElement;
  created: string[];
  recycled: string[];
  rowKeys: () => string[];
} {
  const scroller = document.createElement('div');
  const table = document.createElement('table');
  const head = document.createElement('thead');
  const body = document.createElement('tbody');
  table.append(head, body);
  scroller.append(table);
  document.body.append(scroller);
  if (view !== null) {
    layout.view(scroller, view);
  }
  const created: string[] = [];
  const recycled: string[] = [];
  const list = new VirtualList<IRow>({
    scroller,
    container: body,
    space: (above, below) => {
      table.style.marginTop = `${above}px`;
      table.style.marginBottom = `${below}px`;
    },
    lead: () => 30,
    overscan: 2,
    estimate: 40,
    positions: false,
    wholeWhileHidden: true,
    renderer: {
      create: key => {
        created.push(key);
        const node = document.createElement('tr');
        node.className = 'row';
        node.dataset.key = key;
        return { node, key, updates: 0 };
      },
      update: row => {
        row.updates++;
      },
      recycle: (row, key) => {
        recycled.push(key);
        row.key = key;
        row.node.dataset.key = key;
      }
    }
  });
  list.setKeys(keys(count));
  list.render();
  const rowKeys = (): string[] =>
    [...body.children].map(n => (n as HTMLElement).dataset.key as string);
  return { list, scroller, table, created, recycled, rowKeys };
}

describe("a virtualized table (the board's)", () => {
  beforeEach(() => layout.rows('.row', () => 40));
  afterEach(() => {
    layout.reset();
    document.body.replaceChildren();
  });

  it('puts its rows in the table body, the others in its margins, and no spacer', () => {
    const { scroller, table, rowKeys } = setUpTable(50);
    // 200 px of 40 px rows in view, the first under the head: 5 rows, then 2 more.
    expect(rowKeys()).toEqual(keys(5 + 2));
    expect(scroller.querySelector('.mtj-vlist-spacer')).toBeNull();
    expect(table.style.marginTop).toBe('0px');
    expect(table.style.marginBottom).toBe(`${(50 - 7) * 40}px`);
    expect(scroller.querySelector('tr')?.hasAttribute('aria-posinset')).toBe(
      false
    );
  });

  it('counts the head above the rows when it scrolls', async () => {
    const { scroller, table, rowKeys } = setUpTable(50);
    scroller.scrollTop = 30 + 20 * 40; // k20 at the top of the view, under the head
    scroller.dispatchEvent(new Event('scroll'));
    await nextFrame();
    expect(rowKeys()).toEqual(keys(20 + 5 + 2).slice(20 - 2));
    expect(table.style.marginTop).toBe(`${18 * 40}px`);
  });

  it('lends the elements of the rows that leave to the rows that come in', () => {
    const { list, created, recycled, rowKeys, scroller } = setUpTable(50);
    const before = new Set(scroller.querySelectorAll('tr'));
    list.setKeys(keys(100).slice(50));
    list.render();
    expect(rowKeys()).toEqual(keys(57).slice(50));
    expect(created).toHaveLength(7);
    expect(recycled).toEqual(expect.arrayContaining(keys(57).slice(50)));
    expect(
      [...scroller.querySelectorAll('tr')].every(tr => before.has(tr))
    ).toBe(true);
    list.setKeys(['k50']);
    list.render();
    expect(scroller.querySelectorAll('tr')).toHaveLength(1);
  });

  it('draws every row while it is not laid out, then only those in view', () => {
    const { list, scroller, rowKeys } = setUpTable(50, null);
    expect(rowKeys()).toEqual(keys(50));
    layout.view(scroller, 200);
    list.render();
    expect(rowKeys()).toEqual(keys(7));
  });

  it('scrolls a row into view below the head', () => {
    const { list, scroller } = setUpTable(50);
    expect(list.scrollToKey('k30')?.node.isConnected).toBe(true);
    expect(scroller.scrollTop).toBe(30 + 31 * 40 - 200);
  });
});
