"""A batch's first ``limit`` sends are spread over ``FIRST_WAVE_S`` (``running/batch.py``), so that tasks of a
like length do not end, and send their followers, in waves of ``limit`` for the whole sweep; one of them
cancelled while it waits for its moment is never sent. Checked by the server's own creation times."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from mcp_tasks_jupyter.running.batch import FIRST_WAVE_S

pytestmark = pytest.mark.anyio
WAIT = 30  # seconds: a bound on every wait, never a speed claim


def created(handle) -> datetime:
    return datetime.fromisoformat(handle.created_at.replace("Z", "+00:00"))


async def test_the_first_wave_is_spread_and_the_rest_follow_the_ends(connect_demo):
    async with connect_demo("--poll-interval", "100") as client:
        items = [{"seconds": 0.05, "steps": 1, "label": f"i{i}"} for i in range(16)]
        batch = await client.map("slow_compute", items, limit=8)
        await asyncio.wait_for(batch.gather(), WAIT)
        first = sorted(created(h) for h in batch[:8])
        spread = (first[-1] - first[0]).total_seconds()
        # the 8th goes 7/8 of FIRST_WAVE_S after the first (the server's clock, to the millisecond)
        assert FIRST_WAVE_S >= 0.4 and spread >= 0.7 * FIRST_WAVE_S, spread
        assert all(h.status == "completed" for h in batch)


async def test_a_task_cancelled_while_it_waits_in_the_first_wave_is_never_sent(connect_demo):
    async with connect_demo("--poll-interval", "100") as client:
        items = [{"seconds": 0.05, "steps": 1, "label": f"i{i}"} for i in range(8)]
        batch = await client.map("slow_compute", items, limit=8)
        last = batch[7]
        await asyncio.wait_for(last.cancel(), WAIT)
        assert last.status == "cancelled" and last.task_id is None
        results = await asyncio.wait_for(batch.gather(return_exceptions=True), WAIT)
        assert [h.status for h in batch[:7]] == ["completed"] * 7
        assert isinstance(results[7], BaseException) and "never sent" in str(results[7])
