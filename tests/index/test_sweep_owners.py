"""Who holds a sweep's items (issue 33 item 3), on SQLite and PostgreSQL: a runner whose heartbeat is older
than the lease is dead; followers racing to take its items over, each on a connection of its own, get
disjoint parts (here: one gets all, the other none), and the dead runner's next heartbeat says it lost them."""

from __future__ import annotations

import json
import time

from mcp_tasks_jupyter.index import sweeps as store
from mcp_tasks_jupyter.index.task_index import TaskIndex
from tests.support.postgres import run_sql

SIZE = 40


def test_followers_of_a_stale_runner_take_its_items_over_once(index_location: str) -> None:
    index = TaskIndex(index_location)
    now = time.time()
    row = store.SweepRow(
        id="0123456789ab", server_name="demo", target="http://x/mcp", tool="slow_compute", items_key="k",
        total=SIZE, limit=8, ttl_ms=None, notebook=None, out_var=None, created_at=now, updated_at=now,
        finished_at=None,
    )  # fmt: skip
    stores = [store.SweepStore(index.location, index.describe()) for _ in range(3)]
    try:
        runner = store.new_owner()
        items = [(json.dumps({"label": f"i{i}"}), f"k{i}") for i in range(SIZE)]
        stores[0].now(store.record_sweep, row, items, runner)
        stores[0].now(store.claim, row.id, runner, list(range(8)))
        assert stores[0].now(store.heartbeat, runner, row.id) is True
        # nobody takes a live runner's items
        assert stores[1].now(store.take_over_dead, row.id, store.new_owner()) == []
        # its heartbeat goes stale (on another host: its pid cannot be asked)
        run_sql(
            index_location,
            "UPDATE sweep_owners SET seen_at = ?, hostname = 'elsewhere' WHERE owner = ?",
            (now - store.LEASE_S - 1, runner),
        )
        first, second = store.new_owner(), store.new_owner()
        racing = [
            stores[1].submit(store.take_over_dead, row.id, first),
            stores[2].submit(store.take_over_dead, row.id, second),
        ]
        moved = [future.result(timeout=30) for future in racing]
        positions = [[item.position for item in part] for part in moved]
        assert sorted(positions[0] + positions[1]) == list(range(SIZE))  # every item once
        assert [] in positions  # one follower took them all; the other found a live holder
        taker = first if positions[0] else second
        taken = moved[0] or moved[1]
        assert {item.state for item in taken[:8]} == {"going"} and {item.owner for item in taken} == {taker}
        # the stale runner hears that its items are gone
        assert stores[0].now(store.heartbeat, runner, row.id) is False
        assert stores[1].now(store.heartbeat, taker, row.id) is True
    finally:
        for one in stores:
            one.close()
        index.close()
