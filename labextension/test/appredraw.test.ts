import { describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (under @lumino/widgets) reads as it loads.
vi.hoisted(() => {
  const scope = globalThis as {
    DragEvent?: unknown;
    MouseEvent: typeof MouseEvent;
  };
  scope.DragEvent ??= class DragEvent extends scope.MouseEvent {};
});

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import {
  REDRAW_CLASS,
  offerRedraw,
  recordOf,
  redrawCode
} from '../src/appredraw';

const NOTE =
  "<div class='mtj-app-note' data-mtj-record='1095611236932911190'>an app view…</div>";

describe('a saved app view drawn again', () => {
  it('reads the record the saved note names, and nothing else', () => {
    expect(recordOf(`<div class="mtj-summary">…</div>${NOTE}`)).toBe(
      '1095611236932911190'
    );
    expect(recordOf("<div class='mtj-app-note'>no record</div>")).toBeNull();
    expect(
      recordOf("<div class='mtj-app-note' data-mtj-record='1);x(2'>")
    ).toBeNull();
    expect(redrawCode('42')).toBe(
      '__import__("mcp_tasks_jupyter").redraw_app(42)'
    );
    expect(() => redrawCode('1); import os; (2')).toThrow();
  });

  it('offers one button, which says what to do without a kernel', () => {
    const node = document.createElement('div');
    const site = {
      rendermime: {} as IRenderMimeRegistry,
      kernel: () => null
    };
    offerRedraw(node, NOTE, site);
    offerRedraw(node, NOTE, site);
    expect(node.querySelectorAll(`.${REDRAW_CLASS}`)).toHaveLength(1);
    node.querySelector('button')!.click();
    expect(node.querySelector('.mtj-app-redraw-said')!.textContent).toMatch(
      /^No kernel: start one/
    );
    const none = document.createElement('div');
    offerRedraw(none, "<div class='mtj-app-note'>x</div>", site);
    expect(none.children).toHaveLength(0);
  });

  it('runs the call in the kernel and shows what it says', async () => {
    const node = document.createElement('div');
    const asked: string[] = [];
    const kernel = {
      requestExecute: (content: { code: string }) => {
        asked.push(content.code);
        const future = {
          onIOPub: (_msg: unknown): void => undefined,
          done: Promise.resolve().then(() => {
            future.onIOPub({
              header: { msg_type: 'stream' },
              content: { name: 'stdout', text: 'connect to it first' }
            });
          })
        };
        return future;
      }
    };
    offerRedraw(node, NOTE, {
      rendermime: {} as IRenderMimeRegistry,
      kernel: () => kernel as never
    });
    node.querySelector('button')!.click();
    await vi.waitFor(() =>
      expect(
        node.querySelector(`.${REDRAW_CLASS}`)!.getAttribute('data-mtj-redraw')
      ).toBe('said')
    );
    expect(asked).toEqual([
      '__import__("mcp_tasks_jupyter").redraw_app(1095611236932911190)'
    ]);
    expect(node.querySelector('.mtj-app-redraw-said')!.textContent).toBe(
      'connect to it first'
    );
  });
});
