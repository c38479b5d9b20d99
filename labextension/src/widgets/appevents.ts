/**
 * The one event the JupyterLab extension's plugin (`appteardown.ts`) and an MCP Apps view
 * (`app.ts`, a bundle of its own) share: sent on a view's `.mtj-app` element, synchronously,
 * while the view is still on the page, it asks the view for `ui/resource-teardown` now.
 */

/** The event's name; its `detail` says why (`TeardownReason`). */
export const TEARDOWN_EVENT = 'mtj-app-teardown';
/** The event sent once the view's output is on the page again (a windowed notebook re-attaching it). */
export const ATTACHED_EVENT = 'mtj-app-attached';
/** The class of a view's root element. */
export const VIEW_CLASS = 'mtj-app';

/** Why a view is torn down: its output is leaving the page (cleared, the notebook closed), the kernel restarts. */
export type TeardownReason = 'detached' | 'restart';
