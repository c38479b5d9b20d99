"""Showing a batch (``client.map``, ``%mcp_map``) in a notebook: one live grouped widget beside a
static summary that survives saving (updated once every task has ended).

The summary's text/plain is deterministic for nbval: ``research on demo: 50 tasks…`` at first, then
``research on demo: 50 tasks — 48 completed, 2 failed``; no ids, times or durations.
"""

from __future__ import annotations

import html
from typing import Any

from ..running.batch import Batch
from .display import current_shell


def show_batch(batch: Batch) -> None:
    """Display ``batch`` below the current cell: the live :class:`~.widgets.BatchWidget` and a static
    summary. Outside IPython it prints the summary line instead."""
    shell = current_shell()
    if shell is None:
        print(summary_line(batch))
        return
    from IPython.display import display

    from .widgets.batch_widget import BatchWidget

    display(BatchWidget(batch))
    summary = display(summary_bundle(batch), raw=True, display_id=True)
    if not batch.ready():

        def update(done: Batch) -> None:
            bundle = summary_bundle(done)
            summary.update(bundle, raw=True)

            def again(*_: Any) -> None:  # for nbclient/papermill, as display._update_when_done explains
                shell.events.unregister("post_run_cell", again)
                summary.update(bundle, raw=True)

            shell.events.register("post_run_cell", again)

        batch.on_end(update)


def summary_line(batch: Batch) -> str:
    """``research on demo: 50 tasks…`` while it runs, then with the counts by status."""
    head = f"{batch.tool} on {batch.server}: {len(batch)} task{'' if len(batch) == 1 else 's'}"
    return f"{head} — {batch.view().counts_text()}" if batch.ready() else f"{head}…"


def summary_bundle(batch: Batch) -> dict[str, str]:
    line = summary_line(batch)
    box = "border:1px solid #d0d7de;border-radius:6px;padding:4px 10px;font-size:13px"
    return {
        "text/plain": line,
        "text/html": f'<div class="mtj-batch-summary" style="{box}">{html.escape(line)}</div>',
    }


__all__ = ["show_batch", "summary_bundle", "summary_line"]
