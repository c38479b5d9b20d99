"""A sweep of 100,000 items (issue 33 items 4 and 6): recorded, listed, resumed and exported.

The 100,000 ended items are written through the task index's own interface (``TaskIndex.add`` / ``update``
for the records, ``index/sweeps.py`` for the sweep's rows), not run: running calls is what the sweep tests
and ``benchmarks/sweep.py`` do at smaller sizes. Then, against the demo over stdio: ``mcp-tasks sweeps`` and
``mcp-tasks list --batch`` list it, ``client.map(..., resume=ID)`` takes every item from its record without
a call, the batch's view counts it without rows, and ``mtj.export`` (JSON Lines) and ``mtj.to_dataframe``
write every item once, in order. Nothing here asserts a timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.running.sweep import listing, sweep_items
from tests.support.demo_fixtures import demo_client
from tests.support.ended_sweep import record_ended_sweep

pytestmark = pytest.mark.anyio
N = 100_000
WAIT = 600  # seconds: a bound on every wait, never a speed claim


def cli(index: str, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_tasks_jupyter", "--index", index, *argv],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    return done.stdout


async def test_a_100000_item_sweep_is_recorded_listed_resumed_and_exported(tmp_path):
    path = str(tmp_path / "tasks.sqlite3")
    items = [{"seconds": 0.01, "steps": 1, "label": f"i{i}"} for i in range(N)]
    async with demo_client("stdio", index=path) as client:
        index = client.index
        assert index is not None
        await client.tool("slow_compute")
        sweep_id = record_ended_sweep(client, "slow_compute", items)

        # listed: by the library, and by mcp-tasks in a process of its own
        (counts,) = [c for c in listing(index) if c.sweep.id == sweep_id]
        assert counts.counts == {"ended": N} and counts.sent_again == 0
        found = sweep_items(index, sweep_id)
        assert found is not None and [item.position for item in found[1]] == list(range(N))
        assert sweep_id in cli(path, "sweeps")
        assert len(cli(path, "list", "--batch", sweep_id).splitlines()) >= N

        # resumed: every item from its record, none sent
        batch = await client.map("slow_compute", items, resume=sweep_id)
        assert batch.resumed is not None and batch.resumed.before == N and batch.resumed.fresh == 0
        results = await batch.gather(timeout=WAIT)
        assert [r.structured["label"] for r in results] == [f"i{i}" for i in range(N)]
        assert await client.list_tasks() == []  # the server was never asked to run one
        view = batch.view()
        assert view.counts == {"completed": N} and view.done and view.failed == ()

        # exported: JSON Lines and a DataFrame, every item once, in order
        assert mtj.export(batch, tmp_path / "sweep.jsonl", index=index) == N
        lines = (tmp_path / "sweep.jsonl").read_text().splitlines()
        assert [json.loads(line)["task_id"] for line in lines] == [f"t-{i}" for i in range(N)]
        pytest.importorskip("pandas")
        frame = mtj.to_dataframe(batch)
        assert len(frame) == N and list(frame["task_id"])[:3] == ["t-0", "t-1", "t-2"]
