import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import {
  BatchNotifications,
  describeBatch,
  describeGroup,
  GROUP_WINDOW,
  NotificationGroups,
  REUSE_FOR
} from '../src/groups';
import { type ITask, parseTask } from '../src/protocol';

function task(key: string, patch: Record<string, unknown> = {}): ITask {
  const parsed = parseTask({
    key,
    server: 'demo',
    status: 'completed',
    started: 1,
    tool: 'slow_compute',
    label: `label=${key}`,
    ...patch
  });
  if (!parsed) {
    throw new Error('not a task');
  }
  return parsed;
}

describe('grouped notifications', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('names one task by its arguments, many by count and the first few', () => {
    expect(describeGroup('completed', [task('a')])).toBe(
      'MCP task "slow_compute label=a" on demo completed'
    );
    const twelve = Array.from({ length: 12 }, (_, i) =>
      task(`t${i}`, { label: `seconds=6 label=t${i} steps=3` })
    );
    expect(describeGroup('completed', twelve)).toBe(
      '12 MCP tasks completed on demo (slow_compute): label=t0, label=t1, label=t2 and 9 more'
    );
    const mixed = [
      task('a', { tool: 'research', label: 'topic=tides', server: 'x' }),
      task('b', { label: '' })
    ];
    expect(describeGroup('waiting', mixed)).toBe(
      '2 MCP tasks need input: research topic=tides, slow_compute'
    );
  });

  it('makes one notification of a burst, and updates it while it is fresh', () => {
    const shown: [string, number, string | null][] = [];
    let next = 0;
    const groups = new NotificationGroups((outcome, tasks, replacing) => {
      shown.push([outcome, tasks.length, replacing]);
      return replacing ?? `n${next++}`;
    });
    for (let i = 0; i < 12; i++) {
      groups.add('completed', task(`t${i}`));
    }
    groups.add('failed', task('f', { status: 'failed' }));
    expect(shown).toEqual([]); // nothing until the burst is over
    vi.advanceTimersByTime(GROUP_WINDOW);
    expect(shown).toEqual([
      ['completed', 12, null],
      ['failed', 1, null]
    ]);
    // more of the same kind soon after: the same notification, now counting 15
    for (let i = 12; i < 15; i++) {
      groups.add('completed', task(`t${i}`));
    }
    vi.advanceTimersByTime(GROUP_WINDOW);
    expect(shown[2]).toEqual(['completed', 15, 'n0']);
    // much later: a new one
    vi.advanceTimersByTime(REUSE_FOR);
    groups.add('completed', task('late'));
    vi.advanceTimersByTime(GROUP_WINDOW);
    expect(shown[3]).toEqual(['completed', 1, null]);
    groups.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('batch notifications', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function batch(statuses: string[]): ITask[] {
    return statuses.map((status, i) => task(`b${i}`, { status, batch: 'b1' }));
  }

  it('counts the whole batch, not the tasks of one burst', () => {
    const done = batch([
      ...Array<string>(47).fill('completed'),
      'failed',
      'failed',
      'error'
    ]);
    expect(describeBatch(done)).toEqual({
      message:
        '50 MCP tasks finished on demo (slow_compute): 47 completed, 2 failed, 1 tool error',
      kind: 'error',
      done: true
    });
    const running = batch([
      ...Array<string>(13).fill('completed'),
      ...Array<string>(37).fill('working')
    ]);
    expect(describeBatch(running)).toEqual({
      message:
        '13 of 50 MCP tasks finished on demo (slow_compute): 13 completed (37 still running)',
      kind: 'in-progress',
      done: false
    });
  });

  it('shows one notification per batch, updated until the batch ends', () => {
    let members = batch(['completed', 'working', 'working']);
    const shown: [number, string | null][] = [];
    const groups = new BatchNotifications(
      (tasks, replacing) => {
        shown.push([tasks.length, replacing]);
        return 'n1';
      },
      () => members
    );
    groups.add('b1');
    groups.add('b1');
    vi.advanceTimersByTime(GROUP_WINDOW);
    expect(shown).toEqual([[3, null]]);
    members = batch(['completed', 'completed', 'cancelled']);
    groups.add('b1');
    vi.advanceTimersByTime(GROUP_WINDOW);
    expect(shown).toEqual([
      [3, null],
      [3, 'n1']
    ]);
    groups.add('b1');
    vi.advanceTimersByTime(GROUP_WINDOW);
    expect(shown.length).toBe(2);
  });
});
