/**
 * Where an OAuth sign-in's answer comes back to the kernel: the Jupyter
 * Server extension's route `{base_url}mcp-tasks/oauth/callback`, when the
 * server has it (`mcp_tasks_jupyter/serverext`). The kernel cannot know the
 * address the browser sees (on JupyterHub, `https://hub/user/NAME/`), so the
 * extension tells it over the tasks channel.
 */

import { ServerConnection } from '@jupyterlab/services';

const READY_PATH = 'mcp-tasks/oauth/ready';
const CALLBACK_PATH = 'mcp-tasks/oauth/callback';

let route: Promise<string | null> | null = null;

/**
 * The browser-visible address of the sign-in route, or null when the
 * server extension is not there (asked once per page).
 */
export function signInRoute(): Promise<string | null> {
  if (!route) {
    const settings = ServerConnection.makeSettings();
    const base = settings.baseUrl.endsWith('/')
      ? settings.baseUrl
      : `${settings.baseUrl}/`;
    route = ServerConnection.makeRequest(`${base}${READY_PATH}`, {}, settings)
      .then(response =>
        response.ok ? new URL(CALLBACK_PATH, base).href : null
      )
      .catch(() => null);
  }
  return route;
}

/** No sign-in route (tests, and front ends without the server extension). */
export function noSignInRoute(): Promise<string | null> {
  return Promise.resolve(null);
}
