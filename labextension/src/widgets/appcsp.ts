/**
 * The Content-Security-Policy of an MCP Apps view (`app.ts`), built from the
 * domains its resource declares (`_meta.ui.csp`, already checked by the kernel
 * in `protocol/apps.py`; checked again here), exactly as the spec says, and
 * then restricted further where a view drawn in a notebook page needs it:
 *
 * - no `'self'`: the view is a `srcdoc` document in an opaque-origin sandbox,
 *   where `'self'` could only name the page's own origin (the Jupyter server);
 * - a declared domain on the page's host (any port: cookies ignore ports) is
 *   left out, so no request the view makes can reach the Jupyter server;
 * - `object-src`, `form-action`, `worker-src` `'none'`, `base-uri 'none'`
 *   unless declared.
 *
 * Never looser than the spec's restrictive default: with nothing declared,
 * `default-src 'none'`, inline script and style only, `data:` images and media,
 * `connect-src 'none'`, `frame-src 'none'`.
 */

/** `_meta.ui.csp` of a view's resource. */
export interface IDeclaredCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

const ORIGIN =
  /^(?:https|http|wss|ws):\/\/(?:\*\.)?[A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63})*(?::\d{1,5})?$/;
const MAX_DOMAINS = 32;

/** The host a source expression names (lower case, without port). */
function hostOf(source: string): string {
  const rest = source.slice(source.indexOf('://') + 3);
  return rest.replace(/:\d+$/, '').replace(/^\*\./, '').toLowerCase();
}

/** Hosts that reach this page's server: its own, and every loopback name when the page is on one. */
function pageHosts(pageHost: string): Set<string> {
  const host = pageHost.toLowerCase().replace(/^\[|\]$/g, '');
  const loopback = ['localhost', '127.0.0.1', '::1', '0.0.0.0'];
  return new Set(
    loopback.includes(host) || host.startsWith('127.')
      ? [host, ...loopback]
      : [host]
  );
}

/** The declared sources of one list that may go into the policy. */
export function allowedSources(values: unknown, pageHost: string): string[] {
  if (!Array.isArray(values)) {
    return [];
  }
  const blocked = pageHosts(pageHost);
  const kept: string[] = [];
  for (const value of values.slice(0, MAX_DOMAINS)) {
    if (typeof value !== 'string' || !ORIGIN.test(value)) {
      continue;
    }
    const host = hostOf(value);
    if (
      blocked.has(host) ||
      host.startsWith('127.') ||
      [...blocked].some(b => b.endsWith(`.${host}`) || host === b)
    ) {
      continue;
    }
    kept.push(value);
  }
  return kept;
}

/** The policy for a view whose resource declared `csp`, drawn in a page on `pageHost`. */
export function buildCsp(
  csp: IDeclaredCsp | null | undefined,
  pageHost: string
): string {
  const declared = csp ?? {};
  const connect = allowedSources(declared.connectDomains, pageHost);
  const resources = allowedSources(declared.resourceDomains, pageHost);
  const frames = allowedSources(declared.frameDomains, pageHost);
  const bases = allowedSources(declared.baseUriDomains, pageHost);
  const list = (extra: string[], sources: string[]): string =>
    [...extra, ...sources].join(' ') || "'none'";
  return [
    "default-src 'none'",
    `script-src ${list(["'unsafe-inline'"], resources)}`,
    `style-src ${list(["'unsafe-inline'"], resources)}`,
    `img-src ${list(['data:'], resources)}`,
    `media-src ${list(['data:'], resources)}`,
    `font-src ${list([], resources)}`,
    `connect-src ${list([], connect)}`,
    `frame-src ${list([], frames)}`,
    `base-uri ${list([], bases)}`,
    "object-src 'none'",
    "worker-src 'none'",
    "form-action 'none'"
  ].join('; ');
}

function escapeAttribute(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * The view's HTML with the policy as its very first element (after a doctype,
 * which must stay first): it applies before any of the view's own markup or
 * script is parsed, and a policy once applied cannot be removed or loosened
 * by the document.
 */
export function withCsp(html: string, policy: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(policy)}">`;
  const doctype = /^\uFEFF?\s*<!doctype[^>]*>/i.exec(html);
  if (doctype) {
    const end = doctype[0].length;
    return html.slice(0, end) + meta + html.slice(end);
  }
  return meta + html;
}
