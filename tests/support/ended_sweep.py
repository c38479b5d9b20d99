"""A sweep of many ended items written through the task index's own interface, without running a call:
``TaskIndex.add`` / ``update`` for each item's record, ``index/sweeps.py`` for the sweep's rows. What the
100,000-item test and ``benchmarks/sweep.py`` list, resume and export (running that many calls is what the
smaller sweep tests and the benchmark's run measure)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index import sweeps as store
from mcp_tasks_jupyter.running.sweep import store_of

#: Records written between two flushes (the index keeps at most ``MAX_PENDING_ROWS`` waiting).
FLUSH_EVERY = 2000


def record_ended_sweep(client: mtj.Client, tool: str, items: list[dict[str, Any]], limit: int = 64) -> str:
    """Record a sweep of ``tool`` over ``items`` on ``client``'s server, every item ended ``completed`` with a
    record whose task id is ``t-PLACE`` and whose structured content is ``{"label": item["label"]}``; its id."""
    index = client.index
    assert index is not None
    now = time.time()
    records = []
    for place, item in enumerate(items):
        row = index.add(client.identity, tool, item, task_id=f"t-{place}", status="completed")
        assert row is not None
        result = {"content": [{"type": "text", "text": "done"}], "structuredContent": {"label": item.get("label")}}
        index.update(
            row, task_id=f"t-{place}", status="completed", status_message=None, result=result, finished_at=now
        )
        records.append(row)
        if place % FLUSH_EVERY == FLUSH_EVERY - 1:
            index.flush()
    index.flush()
    keys = [index.arguments_key(item) for item in items]
    sweep = store.SweepRow(
        id=uuid.uuid4().hex[:12],
        server_name=client.name,
        target=client.target,
        tool=tool,
        items_key=store.items_key(client.target, tool, keys, index.key),
        total=len(items),
        limit=limit,
        ttl_ms=None,
        notebook=None,
        out_var=None,
        created_at=now,
        updated_at=now,
        finished_at=None,
    )
    sweeps, owner = store_of(index), store.new_owner()
    kept = [(json.dumps(store.kept_arguments(one, index.key)), k) for one, k in zip(items, keys, strict=True)]
    sweeps.now(store.record_sweep, sweep, kept, owner)
    ends = [
        (p, {"state": store.ENDED, "task_id": f"t-{p}", "record": r, "status": "completed"})
        for p, r in enumerate(records)
    ]
    sweeps.now(store.mark, sweep.id, owner, ends)
    store.owner_gone(owner)
    sweeps.now(store.finish, sweep.id, owner, False)
    return sweep.id
