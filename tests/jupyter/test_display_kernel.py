"""show_task in a real kernel: one output per task (the widget and its static summary), few widget
messages, the summary updated at the end, and a saved notebook that keeps the final summary."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from mcp_tasks_jupyter.jupyter.display import show_board, show_task
from tests.support import REPO_ROOT

from .conftest import WAIT, demo_client

KERNEL_START = 60  # seconds
CELL_TIMEOUT = 90

CONNECT = """\
import sys
import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.jupyter.display import show_board, show_task
demo = [sys.executable, "-m", "mcp_tasks_jupyter.demo", "--dialect", "2025-11-25", "--poll-interval", "100"]
client = await mtj.connect(demo, name="demo")
"""


@dataclass
class Kernel:
    """A real ipykernel driven over ZMQ; every iopub message is kept, whatever its parent."""

    manager: KernelManager
    client: Any
    iopub: list[dict[str, Any]] = field(default_factory=list)

    def run(self, code: str, timeout: float = CELL_TIMEOUT) -> str:
        """Execute ``code``; return once the kernel is idle again (raise if the cell failed)."""
        msg_id = self.client.execute(code)
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except Empty:
                raise TimeoutError(f"cell did not finish within {timeout} s: {code!r}") from None
            self.iopub.append(msg)
            if msg["msg_type"] == "error" and msg["parent_header"].get("msg_id") == msg_id:
                raise AssertionError("cell failed:\n" + "\n".join(msg["content"]["traceback"]))
            if (
                msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"
                and msg["parent_header"].get("msg_id") == msg_id
            ):
                return msg_id

    def stdout(self, msg_id: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.iopub
            if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id
        )


@contextlib.contextmanager
def kernel() -> Iterator[Kernel]:
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(REPO_ROOT))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=KERNEL_START)
        yield Kernel(manager, client)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@dataclass
class Measured:
    task_seconds: float
    updates: int
    summary_first: dict[str, Any]
    summary_updates: list[dict[str, Any]]


def run_show_task(seconds: float, steps: int) -> Measured:
    """show_task for slow_compute(seconds, steps) in a fresh kernel; count the widget's updates."""
    with kernel() as k:
        k.run(CONNECT)
        k.run(
            f'h = await client.start_task("slow_compute", {{"seconds": {seconds}, "steps": {steps}}})\n'
            "show_task(h)"
        )
        done = k.run("r = await h\nprint(f'{h.elapsed:.3f}')")
        task_seconds = float(k.stdout(done))
        k.run("await client.aclose()")
    opens = [
        m
        for m in k.iopub
        if m["msg_type"] == "comm_open"
        and m["content"]["data"]["state"].get("_anywidget_id", "").endswith(".TaskWidget")
    ]
    assert len(opens) == 1
    comm_id = opens[0]["content"]["comm_id"]
    updates = [
        m
        for m in k.iopub
        if m["msg_type"] == "comm_msg"
        and m["content"]["comm_id"] == comm_id
        and m["content"]["data"].get("method") == "update"
    ]
    summaries = [
        m
        for m in k.iopub
        if m["msg_type"] == "display_data" and (m["content"].get("transient") or {}).get("display_id")
    ]
    assert len(summaries) == 1  # one output: the widget and its summary together
    assert "application/vnd.jupyter.widget-view+json" in summaries[0]["content"]["data"]
    display_id = summaries[0]["content"]["transient"]["display_id"]
    summary_updates = [
        m["content"]
        for m in k.iopub
        if m["msg_type"] == "update_display_data" and m["content"]["transient"]["display_id"] == display_id
    ]
    return Measured(task_seconds, len(updates), summaries[0]["content"], summary_updates)


def test_show_task_in_a_kernel_sends_few_updates_and_updates_the_static_summary():
    measured = run_show_task(3, 300)  # the server changes status and progress 100 times a second
    assert measured.task_seconds >= 3
    assert measured.updates <= measured.task_seconds * 10 + 3, measured
    assert measured.updates >= measured.task_seconds * 2, measured  # the view did keep moving
    assert measured.summary_first["data"]["text/plain"] == "slow_compute seconds=3 steps=300 on demo: running…"
    assert measured.summary_updates, "the static summary was never updated"
    final = "slow_compute seconds=3 steps=300 on demo: completed — job: done in 300 steps, value=9045050"
    for update in measured.summary_updates:
        assert update["data"]["text/plain"] == final
        assert (
            update["data"]["application/vnd.jupyter.widget-view+json"]
            == (measured.summary_first["data"]["application/vnd.jupyter.widget-view+json"])
        )
        html = update["data"]["text/html"]
        assert ">completed</span>" in html and "slow_compute" in html and "mtj-duration" in html


def test_a_saved_notebook_keeps_the_final_summary(tmp_path: Path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(CONNECT),
        nbformat.v4.new_code_cell(
            'h = await client.start_task("slow_compute", {"seconds": 1, "steps": 10, '
            '"label": "saved"})\nshow_task(h)'
        ),
        nbformat.v4.new_code_cell("r = await h\nprint(r.text)"),
        nbformat.v4.new_code_cell("await client.aclose()"),
    ]
    NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        startup_timeout=KERNEL_START,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO_ROOT)}},
    ).execute()
    path = tmp_path / "tasks.ipynb"
    nbformat.write(nb, path)

    saved = nbformat.read(path, as_version=4)
    outputs = saved.cells[1].outputs
    assert [o.output_type for o in outputs] == ["display_data"]  # one box, not a widget and a summary
    (summary,) = outputs
    assert "application/vnd.jupyter.widget-view+json" in summary.data
    assert "working" not in summary.data["text/plain"]  # no stale text of the running task
    assert summary.data["text/plain"] == (
        "slow_compute label=saved seconds=1 steps=10 on demo: completed — saved: done in 10 steps, value=385"
    )
    html = summary.data["text/html"]
    assert ">completed</span>" in html and ">slow_compute</b>" in html and "saved: done in 10 steps" in html
    assert re.search(r'class="mtj-duration">\d+\.\d s<', html)
    assert saved.cells[2].outputs[0].text == "saved: done in 10 steps, value=385\n"


@pytest.mark.anyio
async def test_show_task_outside_ipython_prints_the_text_form(capsys):
    async with demo_client("--poll-interval", "100") as client:
        task = await client.start_task("slow_compute", {"seconds": 0.2, "steps": 2})
        show_task(task)
        await asyncio.wait_for(task, WAIT)
        show_task(task)
        show_board([task], status="completed")
        show_board([task], server="elsewhere")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "<TaskHandle slow_compute on demo: working>"
    done = r"slow_compute seconds=0.2 steps=2 on demo: completed in \d+\.\d s — job: done in 2 steps, value=5"
    assert len(lines) == 3 and re.fullmatch(done, lines[1]) and re.fullmatch(done, lines[2])
