"""Showing a batch (``client.map``, ``%mcp_map``) in a notebook: one output holding the live grouped
widget and a static summary that survives saving (updated once every task has ended), as
``display.show_task`` does for one task.

The summary's text/plain is deterministic for nbval: ``research on demo: 50 tasks…`` at first, then
``research on demo: 50 tasks — 48 completed, 2 failed``; no ids, times or durations.
"""

from __future__ import annotations

import html
from typing import Any

from ..running.batch import Batch
from .display import current_shell, update_output, widget_output


def show_batch(batch: Batch) -> None:
    """Display ``batch`` below the current cell: one output holding the live
    :class:`~.widgets.BatchWidget` and a static summary (for places without a kernel), updated when
    the batch ends. Outside IPython it prints the summary line instead."""
    shell = current_shell()
    if shell is None:
        print(summary_line(batch))
        return
    from IPython.display import display

    from .widgets.batch_widget import BatchWidget

    widget = BatchWidget(batch)
    output = display(batch_output(widget), raw=True, display_id=True)
    if not batch.ready():
        batch.on_end(lambda _done: update_output(shell, output, batch_output(widget), widget))


def batch_output(widget: Any) -> dict[str, Any]:
    """The mime bundle of a batch's one output: ``widget``'s view and its batch's static summary
    (whose ``text/plain`` replaces the widget's), as :func:`~.display.task_output` does for a task."""
    return widget_output(widget, summary_bundle(widget.batch))


def summary_line(batch: Batch) -> str:
    """``research on demo: 50 tasks…`` while it runs, then with the counts by status; a resumed sweep adds
    how its tasks came back (``resumed sweep ID: 1,234 ended before, ...``)."""
    head = f"{batch.tool} on {batch.server}: {len(batch)} task{'' if len(batch) == 1 else 's'}"
    line = f"{head} — {batch.view().counts_text()}" if batch.ready() else f"{head}…"
    # a resumed sweep says how its tasks came back, in the saved notebook too
    return f"{line} ({batch.resumed.text()})" if batch.resumed is not None else line


def summary_bundle(batch: Batch) -> dict[str, str]:
    line = summary_line(batch)
    box = "border:1px solid #d0d7de;border-radius:6px;padding:4px 10px;font-size:13px"
    return {
        "text/plain": line,
        "text/html": f'<div class="mtj-batch-summary" style="{box}">{html.escape(line)}</div>',
    }


__all__ = ["batch_output", "show_batch", "summary_bundle", "summary_line"]
