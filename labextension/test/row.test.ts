import { describe, expect, it } from 'vitest';

import { parseTask } from '../src/protocol';
import { TaskRow } from '../src/row';
import type { KernelTaskStore } from '../src/store';

describe('a side panel row', () => {
  it("names its task by tool and arguments' label, as every other view does", () => {
    const task = parseTask({
      key: 'k1',
      server: 'demo',
      status: 'failed',
      started: 1,
      tool: 'failing_job',
      label: 'message="row 7 is malformed"'
    });
    if (!task) {
      throw new Error('not a task');
    }
    const row = new TaskRow(task);
    const store = {
      cancelError: () => undefined,
      isCancelPending: () => false
    } as unknown as KernelTaskStore;
    row.update(task, store);
    expect(row.node.querySelector('.mtj-task-tool')?.textContent).toBe(
      'failing_job message="row 7 is malformed"'
    );
    // the whole name in its tooltip, for a panel too narrow to show it
    expect(row.node.querySelector<HTMLElement>('.mtj-task-tool')?.title).toBe(
      'failing_job message="row 7 is malformed"'
    );
  });
});
