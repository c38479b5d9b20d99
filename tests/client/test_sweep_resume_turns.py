"""A resumed sweep whose items all ended before (issue 33 item 4): its handles come from the records a hundred at
a time, the loop running between, and the batch still ends and says so (its sweep written finished). Counted,
not timed: a task that takes every turn the loop gives it notes how many handles had been made from records
(the real function, counted as it is called) at each of its turns."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from mcp_tasks_jupyter.running import sweep
from mcp_tasks_jupyter.running.sweep import RECORDS_PER_TURN
from tests.support.demo_fixtures import demo_client
from tests.support.ended_sweep import record_ended_sweep
from tests.support.postgres import run_sql
from tests.support.waiting import every_turn

pytestmark = pytest.mark.anyio
WAIT = 60  # seconds: a bound on every wait, never a speed claim


async def test_a_resumed_sweep_of_ended_items_lets_the_loop_run_and_finishes(tmp_path, monkeypatch):
    made = 0
    from_record = sweep._from_record

    def counted(*args, **kwargs):
        nonlocal made
        made += 1
        return from_record(*args, **kwargs)

    monkeypatch.setattr(sweep, "_from_record", counted)
    n = 20 * RECORDS_PER_TURN
    path = str(tmp_path / "tasks.sqlite3")
    items = [{"seconds": 0.01, "steps": 1, "label": f"i{i}"} for i in range(n)]
    async with demo_client("stdio", index=path) as client:
        await client.tool("slow_compute")
        sweep_id = record_ended_sweep(client, "slow_compute", items)
        assert run_sql(path, "SELECT finished_at FROM sweeps WHERE id = ?", (sweep_id,)) == [(None,)]
        async with every_turn(lambda: made) as seen:
            batch = await client.map("slow_compute", items, resume=sweep_id)
        assert batch.resumed is not None and batch.resumed.before == n
        assert batch.ready() and batch.view().counts == {"completed": n}
        ended = asyncio.Event()
        batch.on_end(lambda _batch: ended.set())
        await asyncio.wait_for(ended.wait(), WAIT)
        results = await batch.gather(timeout=WAIT)
        assert [r.structured["label"] for r in results] == [f"i{i}" for i in range(n)]
        async with asyncio.timeout(WAIT):  # the batch's end reached its sweep's record
            while run_sql(path, "SELECT finished_at FROM sweeps WHERE id = ?", (sweep_id,))[0][0] is None:
                await asyncio.sleep(0.05)
    assert made == n and max(b - a for a, b in itertools.pairwise(seen)) <= RECORDS_PER_TURN
