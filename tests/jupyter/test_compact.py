"""The compact one-line task view (issue 15, item 5): what it shows of a running, a finished and a
failed task, its cancel button, and in a real kernel that a cell starting many tasks (a loop of 20)
shows each on one line without being asked, while a cell with a few keeps the full view."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mcp_tasks_jupyter.jupyter.widgets import CompactTaskWidget, compact
from tests.jupyter.kernel_harness import DEMO_COMMAND, running_kernel
from tests.support import eventually

from .conftest import WAIT

pytestmark = pytest.mark.anyio


async def test_one_line_follows_a_task_to_its_outcome(demo, count_updates):
    task = await demo.start_task("slow_compute", {"seconds": 1.0, "steps": 5, "label": "sq"})
    widget = compact(task)
    updates = count_updates(widget)
    assert isinstance(widget, CompactTaskWidget)
    assert (widget.tool, widget.label, widget.status) == (
        "slow_compute",
        "label=sq seconds=1.0 steps=5",
        "working",
    )
    await eventually(
        lambda: widget.progress is not None and widget.message.startswith("step "), timeout=WAIT, what="progress"
    )
    assert widget.progress[1] == 5
    await asyncio.wait_for(task, WAIT)
    assert widget.done and widget.status == "completed" and not widget.failed
    assert widget.message == "sq: done in 5 steps, value=55"  # the outcome, not the last status message
    assert repr(widget) == "CompactTaskWidget(<TaskHandle slow_compute on demo: completed>)"
    assert 1 <= len(updates) <= 10


async def test_one_line_shows_a_failure_and_cancels(demo):
    for mode in ("protocol_error", "tool_error"):  # no result, and a result with isError
        failing = await demo.start_task("failing_job", {"message": "disk full", "seconds": 0.1, "mode": mode})
        widget = compact(failing)
        await asyncio.gather(failing, return_exceptions=True)
        await eventually(lambda w=widget: w.done, timeout=WAIT, what="the end")
        assert widget.failed and "disk full" in widget.message, (mode, widget.message)
    long = await demo.start_task("slow_compute", {"seconds": 60})
    line = compact(long)
    line._handle_msg({"content": {"data": {"method": "custom", "content": {"type": "cancel"}}}, "buffers": []})
    await eventually(lambda: line.done, timeout=WAIT, what="the cancelled task")
    assert line.status == "cancelled" and long.status == "cancelled"


def widget_kinds(kernel) -> dict[str, int]:
    return kernel.value(
        "dict(__import__('collections').Counter(type(w).__name__"
        " for w in __import__('ipywidgets').Widget.widgets.values()"
        " if type(w).__name__ in ('TaskWidget', 'CompactTaskWidget')))"
    )


@pytest.mark.anyio(False)
def test_a_cell_starting_many_tasks_shows_them_compact(tmp_path: Path) -> None:
    with running_kernel(tmp_path) as kernel:
        kernel.run("%load_ext mcp_tasks_jupyter")
        kernel.run(f"%mcp_connect demo {DEMO_COMMAND}")
        kernel.run("a = %mcp_task demo:slow_compute seconds=0.2\nb = %mcp_task demo:slow_compute seconds=0.2")
        assert widget_kinds(kernel) == {"TaskWidget": 2}
        run = kernel.run(
            "hs = []\nfor i in range(20):\n"
            "    h = %mcp_task demo:slow_compute seconds=1 label=t{i}\n"
            "    hs.append(h)"
        )
        assert widget_kinds(kernel) == {"TaskWidget": 2, "CompactTaskWidget": 20}
        assert len(run.displays("application/vnd.jupyter.widget-view+json")) == 20
        kernel.run("one = %mcp_task --compact demo:slow_compute seconds=0.2")
        assert widget_kinds(kernel)["CompactTaskWidget"] == 21
        kernel.run("import asyncio\nawait asyncio.wait_for(asyncio.gather(*hs, one), 30)", timeout=35)
