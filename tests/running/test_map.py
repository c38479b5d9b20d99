"""Fan-out (``client.map``) and waiting (``gather``, ``as_completed``, ``wait``) against the demo server.

Nothing here asserts a timing: the limit is checked by counting, at every change of the batch, the
tasks sent and not yet ended (and on the server, with ``tasks/list``); the order by when each handle
left ``queued``.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.client import MAP_CHECKS_PER_TURN
from mcp_tasks_jupyter.running.batch import HANDLES_PER_TURN
from tests.support.demo_fixtures import demo_client
from tests.support.waiting import every_turn

pytestmark = pytest.mark.anyio
WAIT = 30  # seconds: a bound on every wait, never a speed claim


def research(n: int, stage: float = 0.05) -> list[dict]:
    return [{"topic": f"topic {i}", "stage_seconds": stage} for i in range(n)]


def running(batch: mtj.Batch) -> int:
    return sum(1 for h in batch if h.status != "queued" and not h.done())


async def test_at_most_limit_run_at_once_and_the_queued_start_in_order(connect_demo):
    async with connect_demo("--poll-interval", "100") as client:
        batch = await client.map("research", research(12), limit=3)
        assert isinstance(batch, mtj.Batch) and len(batch) == 12
        assert [h.status for h in batch] == ["working"] * 3 + ["queued"] * 9
        peak, left_queue = 0, []
        waiting = {i for i, h in enumerate(batch) if h.status == "queued"}

        def watch(b: mtj.Batch) -> None:
            nonlocal peak
            peak = max(peak, running(b))
            for i in sorted(waiting):
                if b[i].status != "queued":
                    waiting.discard(i)
                    left_queue.append(i)

        batch.on_change(watch)
        server_peak = 0
        async with asyncio.timeout(WAIT):
            while not batch.ready():  # the server's own count of its unfinished tasks, sampled
                listed = await client.list_tasks()
                server_peak = max(server_peak, sum(1 for t in listed if t.status in ("working", "input_required")))
                await asyncio.sleep(0.02)
        results = await batch.gather()
        assert peak == 3 and server_peak <= 3
        assert left_queue == list(range(3, 12))
        assert [r.structured["topic"] for r in results] == [f"topic {i}" for i in range(12)]
        assert len(await client.list_tasks()) == 12 and batch.ready()
        assert repr(batch).endswith(": 12 completed>")


async def test_a_queued_task_cancelled_is_never_sent():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map("research", research(5, stage=0.1), limit=2)
        queued = batch[4]
        assert queued.status == "queued" and not queued.ready()
        await queued.cancel()
        assert queued.ready() and queued.status == "cancelled" and queued.task_id is None
        with pytest.raises(mtj.TaskCancelled, match="queued"):
            await queued
        results = await batch.gather(return_exceptions=True, timeout=WAIT)
        assert isinstance(results[4], mtj.TaskCancelled)
        assert [r.structured["topic"] for r in results[:4]] == [f"topic {i}" for i in range(4)]
        assert len(await client.list_tasks()) == 4  # the server never heard of the fifth


async def test_cancel_all_cancels_the_running_and_never_sends_the_queued():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map(
            "slow_compute", [{"seconds": 30, "steps": 3, "label": f"j{i}"} for i in range(6)], limit=2
        )
        await asyncio.wait_for(_until(lambda: all(h.task_id for h in batch[:2])), WAIT)
        await batch.cancel()
        await asyncio.wait_for(batch.gather(return_exceptions=True), WAIT)
        assert {h.status for h in batch} == {"cancelled"}
        assert all(h.task_id is None for h in batch[2:])
        listed = await client.list_tasks()
        assert sorted(t.task_id for t in listed) == sorted(h.task_id for h in batch[:2])


async def test_cancelling_a_task_while_it_is_being_sent_cancels_it_on_the_server():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map("slow_compute", [{"seconds": 30, "steps": 3}], limit=1)
        handle = batch[0]
        assert handle.status == "working" and handle.task_id is None  # the creation is on the wire
        await asyncio.wait_for(handle.cancel(), WAIT)
        await asyncio.wait_for(batch.gather(return_exceptions=True), WAIT)
        assert handle.status == "cancelled" and handle.task_id is not None
        assert [t.status for t in await client.list_tasks()] == ["cancelled"]


async def test_gather_keeps_the_order_and_as_completed_yields_each_handle_once_as_it_ends():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        first = await client.start_task("slow_compute", {"seconds": 0, "steps": 1, "label": "early"})
        await asyncio.wait_for(first, WAIT)
        later = [
            await client.start_task("slow_compute", {"seconds": s, "steps": 1, "label": f"s{s}"})
            for s in (0.6, 0.3, 0.0)
        ]
        yielded = []
        async for handle in mtj.as_completed([*later, first], timeout=WAIT):
            assert handle.ready()
            yielded.append(handle)
        assert yielded[0] is first  # ended before the call: yielded first
        assert sorted(map(id, yielded)) == sorted(map(id, [*later, first]))
        results = await mtj.gather(*later, first, timeout=WAIT)
        assert [r.structured["label"] for r in results] == ["s0.6", "s0.3", "s0.0", "early"]


async def test_gather_raises_the_first_failure_or_returns_it_in_place():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map(
            "failing_job",
            [{"seconds": 0, "mode": "protocol_error"}, {"seconds": 0, "mode": "tool_error"}],
            limit=2,
        )
        with pytest.raises(mtj.TaskFailed):
            await batch.gather(timeout=WAIT)
        failed, tool_error = await batch.gather(return_exceptions=True, timeout=WAIT)
        assert isinstance(failed, mtj.TaskFailed) and tool_error.is_error
        view = batch.view()
        assert [t.index for t in view.failed] == [0, 1] and view.done and view.fraction == 1.0
        with pytest.raises(mtj.UsageError, match="unpack"):
            await mtj.gather(list(batch))


async def test_wait_times_out_without_cancelling_the_task():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        handle = await client.start_task("slow_compute", {"seconds": 1.0, "steps": 2, "label": "w"})
        with pytest.raises(TimeoutError):
            await handle.wait(timeout=0.01)
        assert not handle.ready() and handle.status == "working"
        result = await handle.wait(timeout=WAIT)
        assert handle.ready() and result.structured["label"] == "w"

        batch = await client.map("slow_compute", [{"seconds": 1.0, "steps": 2}] * 3, limit=1)
        with pytest.raises(TimeoutError):
            await batch.wait(timeout=0.01)
        assert not batch.ready() and not any(h.status == "cancelled" for h in batch)
        assert len(await batch.wait(timeout=WAIT)) == 3 and batch.ready()


async def test_closing_the_client_ends_the_queued_tasks_lost():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map("slow_compute", [{"seconds": 30, "steps": 3}] * 4, limit=2)
        await asyncio.wait_for(_until(lambda: all(h.task_id for h in batch[:2])), WAIT)
    # The sent tasks are left as a closed client leaves every task (running on the server); the
    # queued ones end lost, saying why, so that nobody awaits them forever.
    assert not any(h.ready() for h in batch[:2]) and all(h.ready() for h in batch[2:])
    outcomes = batch.results()[2:]
    assert all(isinstance(o, mtj.TaskLost) and "before this queued task was sent" in str(o) for o in outcomes)


async def test_bad_input_is_refused_before_anything_is_sent():
    async with demo_client("stdio") as client:
        with pytest.raises(mtj.ToolNotFound):
            await client.map("nope", [{}])
        with pytest.raises(mtj.UsageError, match="map item 1: tool 'research' needs argument"):
            await client.map("research", [{"topic": "a"}, {"ambiguous": True}])
        with pytest.raises(mtj.UsageError, match="limit must be a whole number"):
            await client.map("research", [{"topic": "a"}], limit=0)
        with pytest.raises(mtj.UsageError, match="item 0 must be a mapping"):
            await client.map("research", ["tides"])
        with pytest.raises(mtj.UsageError, match="a list of 2"):
            await client.map("research", [{"topic": "a"}, {"topic": "b"}], answers=[{"x": 1}])
        assert await client.list_tasks() == []


async def test_cached_results_take_no_slot_and_no_server_call(tmp_path):
    index = tmp_path / "tasks.db"
    async with demo_client("stdio", "--poll-interval", "100", index=index) as client:
        first = await client.map("research", research(3), limit=3)
        await first.gather(timeout=WAIT)
    async with demo_client("stdio", "--poll-interval", "100", index=index) as client:
        again = await client.map("research", research(3), limit=1, cache=True)
        assert again.ready() and all(h.cached for h in again)
        assert [r.structured["topic"] for r in await again.gather()] == ["topic 0", "topic 1", "topic 2"]
        assert await client.list_tasks() == []


async def _until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("dialect", ["ext", "sep1686"])
async def test_the_limit_holds_where_the_server_decides_about_tasks(dialect):
    async with demo_client("stdio", "--poll-interval", "100", dialect=dialect) as client:
        batch = await client.map("research", research(6), limit=2)
        peak = 0

        def watch(b: mtj.Batch) -> None:
            nonlocal peak
            peak = max(peak, running(b))

        batch.on_change(watch)
        results = await batch.gather(timeout=WAIT)
        assert peak == 2 and [r.structured["topic"] for r in results] == [f"topic {i}" for i in range(6)]


async def test_a_big_batch_lets_the_loop_run_while_its_handles_are_made():
    """A 10,000-item map made its handles in one piece (0.2 s: a kernel's widgets and next cell waited);
    they are made ``HANDLES_PER_TURN`` at a time, the loop running between. Counted, not timed: a task that
    takes every turn the loop gives it counts those ``map`` gave while it ran."""
    n = 5 * HANDLES_PER_TURN
    items = [{"seconds": 30, "steps": 1, "label": f"b{i}"} for i in range(n)]
    async with demo_client("stdio", "--poll-interval", "100") as client:
        await client.tool("slow_compute")  # listed before: map's own turns are its checks' and its handles'
        async with every_turn(lambda: None) as turns:
            batch = await client.map("slow_compute", items, limit=2)
            during = len(turns) - 1
        assert len(batch) == n and [h.status for h in batch[:3]] == ["working", "working", "queued"]
        await batch.cancel()
        assert all(h.done() for h in batch)
    assert during >= n // MAP_CHECKS_PER_TURN + n // HANDLES_PER_TURN


async def test_cancelling_a_big_batch_lets_the_loop_run_and_sends_nothing_queued():
    """``batch.cancel()`` ended a 10,000-item batch's queued tasks in one piece (78 ms); it ends them
    ``HANDLES_PER_TURN`` at a time, and no slot freed meanwhile sends one of them. Counted, not timed: a task
    that takes every turn the loop gives it notes how many of the batch's tasks had ended at each."""
    n = 5 * HANDLES_PER_TURN
    items = [{"seconds": 30, "steps": 1, "label": f"c{i}"} for i in range(n)]
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map("slow_compute", items, limit=2)
        await asyncio.wait_for(_until(lambda: all(h.task_id for h in batch[:2])), WAIT)
        async with every_turn(lambda: sum(1 for h in batch if h.done())) as seen:
            await asyncio.wait_for(batch.cancel(), WAIT)
        assert all(h.status == "cancelled" for h in batch)
        assert all(h.task_id is None for h in batch[2:])
        assert len(await client.list_tasks()) == 2  # the server heard of the first two only
    assert max(b - a for a, b in itertools.pairwise(seen)) <= HANDLES_PER_TURN
