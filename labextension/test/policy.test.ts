import { describe, expect, it } from 'vitest';

import {
  DEFAULT_POLICY,
  describe as describeTask,
  type INotifyPolicy,
  NOTIFY_STATUSES,
  outcomeOf,
  readPolicy
} from '../src/policy';
import { type ITask, parseTask } from '../src/protocol';
import schema from '../schema/notifications.json';

function task(patch: Record<string, unknown> = {}): ITask {
  const parsed = parseTask({
    key: 'k',
    server: 'demo',
    status: 'working',
    started: 1,
    tool: 'research',
    ...patch
  });
  if (!parsed) {
    throw new Error('not a task');
  }
  return parsed;
}

const working = task();

describe('the notification settings', () => {
  it('has the schema defaults as its defaults', () => {
    const defaults = readPolicy(
      Object.fromEntries(
        Object.entries(schema.properties).map(([name, prop]) => [
          name,
          prop.default
        ])
      )
    );
    expect(defaults).toEqual(DEFAULT_POLICY);
    expect(schema.properties.statuses.items.enum).toEqual([...NOTIFY_STATUSES]);
  });

  it('falls back to the defaults for what it cannot read', () => {
    expect(readPolicy(undefined)).toEqual(DEFAULT_POLICY);
    expect(
      readPolicy({ statuses: 'completed', onlyWhenOutOfView: 'no' })
    ).toEqual(DEFAULT_POLICY);
    expect(
      readPolicy({
        statuses: ['cancelled', 'bogus', 3],
        onlyWhenOutOfView: false
      })
    ).toEqual({
      statuses: new Set(['cancelled']),
      onlyWhenOutOfView: false
    });
  });
});

describe('what a transition announces', () => {
  it('by default: completions, failures and questions, not cancellations', () => {
    const of = (current: ITask): unknown =>
      outcomeOf(working, current, DEFAULT_POLICY);
    expect(of(task({ status: 'completed' }))).toEqual({
      outcome: 'completed',
      status: 'completed'
    });
    expect(of(task({ status: 'lost' }))).toEqual({
      outcome: 'failed',
      status: 'lost'
    });
    expect(of(task({ status: 'input_required' }))).toEqual({
      outcome: 'waiting',
      status: 'input_required'
    });
    expect(of(task({ needs_input: true }))).toEqual({
      outcome: 'waiting',
      status: 'input_required'
    });
    expect(of(task({ status: 'cancelled' }))).toBeNull();
    expect(of(task({ status: 'unknown' }))).toBeNull();
    expect(of(task({ status: 'submitted' }))).toBeNull();
  });

  it('a tool error or a declined question as a failure, in words', () => {
    const of = (current: ITask): unknown =>
      outcomeOf(working, current, DEFAULT_POLICY);
    expect(of(task({ status: 'error' }))).toEqual({
      outcome: 'failed',
      status: 'error'
    });
    expect(of(task({ status: 'declined' }))).toEqual({
      outcome: 'failed',
      status: 'declined'
    });
    expect(
      describeTask(task({ status: 'error', message: 'disk full' }), 'failed')
    ).toBe('MCP task "research" on demo tool error: disk full');
  });

  it('nothing more once a task was over, and no second "needs input"', () => {
    const done = task({ status: 'completed' });
    expect(
      outcomeOf(done, task({ status: 'failed' }), DEFAULT_POLICY)
    ).toBeNull();
    const waiting = task({ needs_input: true });
    expect(
      outcomeOf(waiting, task({ status: 'input_required' }), DEFAULT_POLICY)
    ).toBeNull();
  });

  it('only the statuses the settings name', () => {
    const policy: INotifyPolicy = {
      statuses: new Set(['cancelled', 'unknown']),
      onlyWhenOutOfView: true
    };
    expect(outcomeOf(working, task({ status: 'cancelled' }), policy)).toEqual({
      outcome: 'cancelled',
      status: 'cancelled'
    });
    expect(outcomeOf(working, task({ status: 'unknown' }), policy)).toEqual({
      outcome: 'failed',
      status: 'unknown'
    });
    expect(
      outcomeOf(working, task({ status: 'completed' }), policy)
    ).toBeNull();
    expect(outcomeOf(working, task({ needs_input: true }), policy)).toBeNull();
  });

  it('says which task, where, and what happened', () => {
    expect(describeTask(task({ status: 'completed' }), 'completed')).toBe(
      'MCP task "research" on demo completed'
    );
    expect(
      describeTask(task({ status: 'failed', message: 'boom' }), 'failed')
    ).toBe('MCP task "research" on demo failed: boom');
    expect(
      describeTask(task({ tool: null, status: 'cancelled' }), 'cancelled')
    ).toBe('MCP task k on demo cancelled');
    expect(describeTask(task({ status: 'input_required' }), 'waiting')).toBe(
      'MCP task "research" on demo needs input'
    );
  });
});
