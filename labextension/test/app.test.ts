/**
 * The MCP Apps view's host side: its CSP (appcsp.ts), its postMessage channel
 * (appframe.ts) and the bounds of app.ts.
 */
import { describe, expect, it } from 'vitest';

import {
  boundedHeight,
  linkable,
  MAX_HEIGHT,
  MIN_HEIGHT
} from '../src/widgets/app';
import { allowedSources, buildCsp, withCsp } from '../src/widgets/appcsp';
import {
  FrameTransport,
  MAX_MESSAGES_PER_SECOND,
  type JsonRpcMessage
} from '../src/widgets/appframe';

describe('the CSP of a view', () => {
  it('is the restrictive default when nothing is declared, without self', () => {
    const policy = buildCsp(undefined, '127.0.0.1');
    expect(policy).toBe(
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
        "img-src data:; media-src data:; font-src 'none'; connect-src 'none'; " +
        "frame-src 'none'; base-uri 'none'; object-src 'none'; worker-src 'none'; form-action 'none'"
    );
    expect(policy).not.toContain("'self'");
  });

  it('adds exactly the declared origins, each to its directives', () => {
    const policy = buildCsp(
      {
        connectDomains: ['https://api.example.com', 'wss://live.example.com'],
        resourceDomains: ['https://*.cdn.example.com'],
        frameDomains: ['https://player.example.com'],
        baseUriDomains: ['https://base.example.com']
      },
      'lab.example.org'
    );
    expect(policy).toContain(
      'connect-src https://api.example.com wss://live.example.com'
    );
    expect(policy).toContain(
      "script-src 'unsafe-inline' https://*.cdn.example.com"
    );
    expect(policy).toContain('img-src data: https://*.cdn.example.com');
    expect(policy).toContain('frame-src https://player.example.com');
    expect(policy).toContain('base-uri https://base.example.com');
  });

  it('never takes a source that is not a plain origin', () => {
    for (const bad of [
      'https://a.com; script-src *',
      "'unsafe-eval'",
      '*',
      'https://a.com/path',
      'data:',
      'https://a.com"',
      42
    ]) {
      expect(allowedSources([bad], 'lab.example.org')).toEqual([]);
    }
  });

  it("never names the page's own host, on any port, nor loopback", () => {
    expect(
      allowedSources(
        [
          'http://localhost:8888',
          'http://127.0.0.1:9999',
          'http://[::1]:8888',
          'https://ok.example.com'
        ],
        '127.0.0.1'
      )
    ).toEqual(['https://ok.example.com']);
    expect(
      allowedSources(
        [
          'https://hub.example.org:443',
          'https://*.example.org',
          'https://x.io'
        ],
        'hub.example.org'
      )
    ).toEqual(['https://x.io']);
  });

  it('puts the policy first, after a doctype, escaped', () => {
    const meta = (p: string) =>
      `<meta http-equiv="Content-Security-Policy" content="${p}">`;
    expect(withCsp('<!DOCTYPE html><html>x</html>', "a 'b'")).toBe(
      `<!DOCTYPE html>${meta("a 'b'")}<html>x</html>`
    );
    expect(withCsp('<p>x</p>', 'a"b<')).toBe(`${meta('a&quot;b&lt;')}<p>x</p>`);
  });
});

describe('the channel to a view', () => {
  function setup(now: () => number = () => 0) {
    const frame = document.createElement('iframe');
    document.body.append(frame);
    const channel = new FrameTransport(frame, window, now);
    const got: JsonRpcMessage[] = [];
    channel.onmessage = m => got.push(m);
    const from = (source: unknown, data: unknown) =>
      channel.received({ source, data } as unknown as MessageEvent);
    return { frame, channel, got, from };
  }

  it('takes JSON-RPC messages from its own frame only', () => {
    const { frame, channel, got, from } = setup();
    const other = document.createElement('iframe');
    document.body.append(other);
    const ok = { jsonrpc: '2.0', method: 'ui/notifications/initialized' };
    from(frame.contentWindow, ok);
    from(other.contentWindow, ok);
    from(window, ok);
    from(null, ok);
    from(frame.contentWindow, { method: 'x' });
    from(frame.contentWindow, 'text');
    from(frame.contentWindow, [ok]);
    expect(got).toEqual([ok]);
    expect(channel.refused).toMatchObject({ source: 3, shape: 3 });
  });

  it('refuses an oversized or unserialisable message', () => {
    const { frame, channel, got, from } = setup();
    from(frame.contentWindow, {
      jsonrpc: '2.0',
      big: 'x'.repeat(5 * 1024 * 1024)
    });
    const loop: Record<string, unknown> = { jsonrpc: '2.0' };
    loop.self = loop;
    from(frame.contentWindow, loop);
    expect(got).toEqual([]);
    expect(channel.refused.size).toBe(2);
  });

  it('drops a flood, and takes messages again a second later', () => {
    let clock = 1000;
    const { frame, channel, got, from } = setup(() => clock);
    for (let i = 0; i < MAX_MESSAGES_PER_SECOND + 50; i++) {
      from(frame.contentWindow, { jsonrpc: '2.0', method: 'm', params: { i } });
    }
    expect(got.length).toBe(MAX_MESSAGES_PER_SECOND);
    expect(channel.refused.flood).toBe(50);
    clock += 1000;
    from(frame.contentWindow, { jsonrpc: '2.0', method: 'm' });
    expect(got.length).toBe(MAX_MESSAGES_PER_SECOND + 1);
  });

  it('stops taking messages once closed', async () => {
    const { frame, channel, got, from } = setup();
    await channel.close();
    from(frame.contentWindow, { jsonrpc: '2.0', method: 'm' });
    expect(got).toEqual([]);
  });
});

describe('what a view asks', () => {
  it('gets a height within bounds', () => {
    expect(boundedHeight(1e9)).toBe(MAX_HEIGHT);
    expect(boundedHeight(-5)).toBe(MIN_HEIGHT);
    expect(boundedHeight(300.4)).toBe(300);
    expect(boundedHeight('300')).toBeNull();
    expect(boundedHeight(Number.NaN)).toBeNull();
  });

  it('is offered http(s) links only', () => {
    expect(linkable('https://example.com/x')).toBe(true);
    expect(linkable('http://example.com')).toBe(true);
    for (const bad of [
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc',
      'nope',
      5
    ]) {
      expect(linkable(bad)).toBe(false);
    }
  });
});
