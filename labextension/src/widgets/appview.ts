/**
 * AppViewWidget front end (`jupyter/widgets/app_widget.py`): one MCP Apps
 * view, drawn by the code of the kernel's one `AppBridgeHost` (`apphost.ts`),
 * which its `host` trait names. anywidget hands that widget's exports over
 * (`host.getWidget`, waiting up to 10 s for it to load); if it never does,
 * the output says so rather than staying empty.
 */

import type { IAppState } from './app';
import type { IAppHostExports } from './apphost';
import type { IRenderProps } from './anywidget';

/** What anywidget (0.11) gives a render to reach another widget of the page. */
interface IComposition {
  getWidget(ref: unknown): Promise<{ exports: unknown }>;
}

interface IViewState extends IAppState {
  host: string | null;
}

function isHost(value: unknown): value is IAppHostExports {
  return typeof (value as IAppHostExports | null)?.render === 'function';
}

async function render(
  props: IRenderProps<IViewState> & { host?: IComposition }
): Promise<(() => void) | void> {
  const { model, el, host } = props;
  const ref = model.get('host');
  let lent: unknown = null;
  try {
    lent = host && ref ? (await host.getWidget(ref)).exports : null;
  } catch {
    // not loaded within anywidget's wait: said below
  }
  if (!isHost(lent)) {
    el.textContent =
      'The MCP Apps view cannot be drawn: the code that draws views did not load in this page ' +
      '(anywidget 0.11 or newer is needed); the task and its result are unaffected.';
    return;
  }
  return lent.render({ model, el });
}

export default { render };
