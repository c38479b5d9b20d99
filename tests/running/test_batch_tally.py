"""A batch's view is kept as its tasks end (``running/batch_tally.py``): the same snapshot as counting every
handle, at every change of a batch with failures, cancellations and tasks of different lengths; and a view of
a batch whose tasks ended asks none of its handles (so a 100,000-item sweep's view costs what its running
tasks cost). Nothing here asserts a timing."""

from __future__ import annotations

import collections

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.running.batch import FAILED_SHOWN, SLOWEST_SHOWN
from mcp_tasks_jupyter.tasks.handle import TaskHandle
from tests.support.demo_fixtures import demo_client

pytestmark = pytest.mark.anyio
WAIT = 60  # seconds: a bound on every wait, never a speed claim


def counted_over_every_handle(batch: mtj.Batch) -> tuple[dict[str, int], int, list[int]]:
    """What a view showed before: counts by status, the ended, the first failed places (every handle asked)."""
    counts = collections.Counter(h.status for h in batch)
    ended = sum(1 for h in batch if h.done())
    failed = [
        i
        for i, h in enumerate(batch)
        if h.done() and h.status != "cancelled" and (h.exception() is not None or h.result().is_error)
    ][:FAILED_SHOWN]
    return dict(counts), ended, failed


async def test_the_view_kept_as_tasks_end_is_the_view_of_every_handle():
    # 30 items: every third fails (a tool error), with lengths that make later places end first
    items = [
        {"seconds": 0.02 * (i % 5), "mode": "tool_error" if i % 3 == 0 else "protocol_error", "message": f"m{i}"}
        for i in range(30)
    ]
    seen: list[tuple[dict[str, int], int, list[int]]] = []
    mismatches: list[str] = []
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map("failing_job", items, limit=4)

        def check(b: mtj.Batch) -> None:
            view = b.view()
            counts, ended, failed = counted_over_every_handle(b)
            mine = (view.counts, view.ended, [t.index for t in view.failed])
            if mine != (counts, ended, failed) or sum(view.counts.values()) != len(b):
                mismatches.append(f"{mine} != {(counts, ended, failed)}")
            seen.append(mine)

        batch.on_change(check)
        results = await batch.gather(return_exceptions=True, timeout=WAIT)
        assert len(results) == 30
        check(batch)
        assert not mismatches, mismatches[:3]
        view = batch.view()
        assert view.done and view.ended == 30 and view.fraction == 1.0
        assert [t.index for t in view.failed] == list(range(FAILED_SHOWN))
        ends = [h.finished for h in batch]
        assert view.finished == batch.finished == max(e for e in ends if e is not None)
        by_length = sorted(range(30), key=lambda i: (-(batch[i].finished - batch[i].started), i))
        assert [t.index for t in view.slowest] == by_length[:SLOWEST_SHOWN]
        assert len(seen) > 30  # checked at every change, not only at the end


async def test_a_cancelled_batch_counts_its_queued_tasks_cancelled():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map("failing_job", [{"seconds": 30, "mode": "tool_error"}] * 12, limit=3)
        view = batch.view()
        assert view.counts == {"working": 3, "queued": 9} and view.ended == 0
        await batch.cancel()
        await batch.gather(return_exceptions=True, timeout=WAIT)
        assert batch.view().counts == {"cancelled": 12} and batch.ready() and batch.view().failed == ()


async def test_a_finished_batchs_view_asks_none_of_its_handles(monkeypatch):
    async with demo_client("stdio", "--poll-interval", "100") as client:
        batch = await client.map("failing_job", [{"seconds": 0, "mode": "tool_error"}] * 200, limit=16)
        await batch.gather(return_exceptions=True, timeout=WAIT)
        assert batch.ready()
        asked = collections.Counter[str]()
        for name in ("done", "status", "progress", "finished"):
            original = getattr(TaskHandle, name)
            if isinstance(original, property):

                def counting_property(self, _get=original.fget, _name=name):  # type: ignore[no-untyped-def]
                    asked[_name] += 1
                    return _get(self)

                monkeypatch.setattr(TaskHandle, name, property(counting_property))
            else:

                def counting(self, _call=original, _name=name):  # type: ignore[no-untyped-def]
                    asked[_name] += 1
                    return _call(self)

                monkeypatch.setattr(TaskHandle, name, counting)
        view = batch.view()
        # only the failed and slowest listed are read (FAILED_SHOWN + SLOWEST_SHOWN), never all 200
        assert sum(asked.values()) <= 3 * (FAILED_SHOWN + SLOWEST_SHOWN), asked
        assert sum(view.counts.values()) == 200 and view.ended == 200
