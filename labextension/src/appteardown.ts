/**
 * `ui/resource-teardown` reaches an MCP Apps view before it goes (issue 32 item 3).
 *
 * JupyterLab removes an output's node from the page (clearing it, re-running its cell, closing the
 * notebook) before the widget's own cleanup runs, and a frame taken off the page is gone at once. So
 * the teardown is asked earlier, from Lumino's message loop: a hook on each widget-view renderer sees
 * its `before-detach` message, which Lumino sends while the node is still on the page, and sends
 * `TEARDOWN_EVENT` to the views inside, synchronously; each view moves its running frame out of the
 * way (`moveBefore`, which keeps it running), asks for the teardown and waits for the answer within
 * its bound. A kernel restart (the status `restarting`, `autorestarting` or `dead`, reported before the
 * restart request leaves the page) asks every view of the notebook; the restart does not wait for the
 * answers. A page closing is the view's own affair (`pagehide`, sent best effort, not awaited).
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import {
  type IMessageHandler,
  type Message,
  MessageLoop
} from '@lumino/messaging';

import {
  ATTACHED_EVENT,
  TEARDOWN_EVENT,
  type TeardownReason,
  VIEW_CLASS
} from './widgets/appevents';

/** Ask every view under `node` for its teardown, now. */
export function tearDownViewsIn(node: Element, why: TeardownReason): number {
  const views = node.querySelectorAll(`.${VIEW_CLASS}`);
  for (const view of views) {
    view.dispatchEvent(new CustomEvent(TEARDOWN_EVENT, { detail: why }));
  }
  return views.length;
}

const WATCHED = new WeakSet<IMessageHandler>();

/** Tear down the views `renderer` draws before its node leaves the page; redraw them when it is back. */
export function watchAppViews(
  renderer: IMessageHandler & { readonly node: HTMLElement }
): void {
  if (WATCHED.has(renderer)) {
    return;
  }
  WATCHED.add(renderer);
  MessageLoop.installMessageHook(renderer, (_handler, msg: Message) => {
    if (msg.type === 'before-detach') {
      tearDownViewsIn(renderer.node, 'detached');
    } else if (msg.type === 'after-attach') {
      for (const view of renderer.node.querySelectorAll(`.${VIEW_CLASS}`)) {
        view.dispatchEvent(new CustomEvent(ATTACHED_EVENT));
      }
    }
    return true;
  });
}

/** Tear down the views of `panel` when its kernel restarts or dies. */
export function tearDownOnRestart(panel: NotebookPanel): void {
  panel.sessionContext.statusChanged.connect((_, status) => {
    if (['restarting', 'autorestarting', 'dead'].includes(status)) {
      tearDownViewsIn(panel.content.node, 'restart');
    }
  });
}
