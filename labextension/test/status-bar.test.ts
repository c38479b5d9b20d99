import { describe, expect, it } from 'vitest';

import { statusText } from '../src/status';

const none = { running: 0, waiting: 0 };

describe('the status bar says whose tasks it counts', () => {
  it('counts other notebooks as theirs when this one has none', () => {
    expect(statusText(none, { running: 0, waiting: 2 })).toBe(
      'MCP (other notebooks): 0 running · 2 waiting'
    );
  });
  it("says this notebook's and the others' apart", () => {
    expect(
      statusText({ running: 1, waiting: 0 }, { running: 0, waiting: 2 })
    ).toBe(
      'MCP: 1 running · 0 waiting · other notebooks: 0 running · 2 waiting'
    );
  });
  it('reads plainly when only this notebook (or no notebook) has tasks', () => {
    expect(statusText({ running: 1, waiting: 1 }, none)).toBe(
      'MCP: 1 running · 1 waiting'
    );
    expect(statusText(null, { running: 3, waiting: 0 })).toBe(
      'MCP: 3 running · 0 waiting'
    );
    expect(statusText(none, none)).toBe('MCP: idle');
  });
  it('counts the queued tasks of a fan-out, which are neither running nor waiting', () => {
    expect(statusText({ running: 8, waiting: 0, queued: 16 }, none)).toBe(
      'MCP: 8 running · 16 queued · 0 waiting'
    );
    expect(statusText({ running: 0, waiting: 0, queued: 3 }, none)).toBe(
      'MCP: 0 running · 3 queued · 0 waiting'
    );
  });
});
