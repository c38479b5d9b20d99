/**
 * AppBridgeHost front end (`jupyter/widgets/app_widget.py`): the code that
 * draws every MCP Apps view (`app.ts`: the sandboxed frame and the host side
 * of its bridge, `@modelcontextprotocol/ext-apps`' `AppBridge` with its
 * schemas: most of a megabyte before minifying), sent to the page once per
 * kernel. Each view's own widget (`appview.ts`) is a few hundred bytes that
 * borrow it through anywidget's composition (`host.getWidget`), instead of
 * each view's model carrying the whole bundle over the kernel's channel and
 * into the notebook's widget state.
 */

import type { IAppState } from './app';
import app from './app';
import type { IRenderProps } from './anywidget';

/** What this widget lends each view: the view's renderer. */
export interface IAppHostExports {
  render(props: IRenderProps<IAppState>): (() => void) | void;
}

export default {
  initialize(): IAppHostExports {
    return { render: props => app.render(props) };
  },
  render(): void {
    // never displayed: it only lends its code to the views
  }
};
