"""An index dropped without ``close()`` is closed by its finalizer, which the cyclic collector may run inside
any code. It once ran inside another pool's ``ThreadPoolExecutor.submit``, which holds a lock every pool's
``submit`` takes; the close submitted to its own writer's pool and waited forever (seen as CI runs hung for
minutes). Now the finalizer hands the close to the closing thread (``index/closer.py``). Run in a process of
its own: the hang, were it back, would hold that lock for the rest of the test session. The dropped index's
threads end with it (its sweeps' store was kept alive by its own finalizer, and its thread with it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.processes import python_env

pytestmark = pytest.mark.loopback

WAIT = 60  # seconds: a bound on the run, never a speed claim

SCRIPT = textwrap.dedent(
    """
    import asyncio, concurrent.futures.thread, gc, sqlite3, sys
    from mcp_tasks_jupyter.index.sweeps import SweepStore
    from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex

    path = sys.argv[1]
    dropped = TaskIndex(path)

    async def record():  # on a running loop, the record's batch is written on the writer's thread
        dropped.add(ServerIdentity("demo", "x"), "slow_compute", {"seconds": 1})
        await asyncio.sleep(0.5)

    asyncio.run(record())
    store = SweepStore(dropped.location, "here")
    store.submit(lambda database, db: None).result(30)  # the sweeps' pool started too
    dropped.cycle = dropped  # only the cyclic collector can drop it
    store.cycle = store
    del dropped, store
    # What the collector does when it runs inside a pool's submit: finalize with the shared lock held.
    with concurrent.futures.thread._global_shutdown_lock:
        gc.collect()
    from mcp_tasks_jupyter.index import closer
    closer._drain()  # what exit does: the queued close runs to its end
    rows = sqlite3.connect(path).execute("SELECT tool FROM tasks").fetchall()
    import threading, time
    deadline = time.monotonic() + 10
    ours = ("mtj-sweeps", "mtj-index-writer")
    while left := [t.name for t in threading.enumerate() if t.name.startswith(ours)]:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    print("closed", rows, "left", left)
    """
)


def test_a_dropped_index_is_closed_even_when_collected_inside_a_pools_submit(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "tasks.sqlite3")],
        capture_output=True, text=True, env=python_env(), timeout=WAIT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # its record written, and no thread of the dropped index's (its sweeps' thread was once kept for good)
    assert "closed [('slow_compute',)] left []" in done.stdout, done.stdout + done.stderr
