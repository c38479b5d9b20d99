"""A view's updates are coalesced (``jupyter/widgets/coalesce.py``): requests while a flush is pending
collapse into it, scheduled flushes are at least an interval apart, an immediate one runs at once.

Times are the flushes' own readings of the monotonic clock: lower bounds the code guarantees (a flush is
never early), never a claim of how fast anything runs."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from mcp_tasks_jupyter.jupyter.widgets.coalesce import Coalescer

pytestmark = pytest.mark.anyio
INTERVAL = 0.05
WAIT = 20  # seconds: a bound on every wait


async def test_requests_while_a_flush_is_pending_collapse_into_it_and_flushes_keep_their_interval():
    ran: list[float] = []
    flushed = asyncio.Event()

    def flush() -> None:
        ran.append(time.monotonic())
        flushed.set()

    coalescer = Coalescer(flush, INTERVAL)
    for _round in range(5):
        flushed.clear()
        for _ in range(1000):  # a thousand changes in one pass of the loop
            coalescer.request()
        await asyncio.wait_for(flushed.wait(), WAIT)
    assert len(ran) == coalescer.flushes == 5  # one flush per round, not one per request
    assert all(later - earlier >= INTERVAL * 0.999 for earlier, later in itertools.pairwise(ran))


async def test_an_immediate_flush_runs_at_once_and_drops_the_scheduled_one():
    ran: list[str] = []
    coalescer = Coalescer(lambda: ran.append("flush"), INTERVAL)
    coalescer.request(now=True)
    coalescer.request()  # scheduled: the interval since the last has not passed
    assert ran == ["flush"]
    coalescer.request(now=True)  # the final state: at once, and the scheduled one goes
    assert ran == ["flush", "flush"]
    await asyncio.sleep(3 * INTERVAL)
    assert ran == ["flush", "flush"] and coalescer.flushes == 2
