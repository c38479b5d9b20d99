import { describe, expect, it } from 'vitest';

import { summaryOf } from '../src/fallback';

const VIEW = { model_id: 'abc', version_major: 2, version_minor: 1 };

describe('the saved summary of a missing widget', () => {
  it('is the HTML of our own task, batch and board outputs only', () => {
    const summary = '<div class="mtj-summary" style="x">completed</div>';
    const board = '<div class="mtj-board-summary" style="x"></div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': summary
      })
    ).toBe(summary);
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': board
      })
    ).toBe(board);
    // a batch (%mcp_map) carries its summary in the same output since it has one box
    const batch = '<div class="mtj-batch-summary" style="x">50 tasks</div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': batch
      })
    ).toBe(batch);
    // a task still running when the notebook was saved
    const running = '<div class="mtj-task" style="x">running…</div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': running
      })
    ).toBe(running);
    // a task the live view showed on one line (a loop's): its summary is one line too
    const compact =
      '<div class="mtj-compact-summary" style="x">cancelled slow_compute label=t3</div>';
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': compact
      })
    ).toBe(compact);
    // someone else's widget, an HTML output that is no widget, or nothing at all
    expect(
      summaryOf({
        'application/vnd.jupyter.widget-view+json': VIEW,
        'text/html': '<div>other</div>'
      })
    ).toBeNull();
    expect(summaryOf({ 'text/html': summary })).toBeNull();
    expect(
      summaryOf({ 'application/vnd.jupyter.widget-view+json': VIEW })
    ).toBeNull();
    expect(summaryOf(null)).toBeNull();
  });
});
