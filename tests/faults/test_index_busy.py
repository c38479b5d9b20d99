"""The task index meets a database another process has locked: writes on the event loop return at once,
the changes are kept (merged per row) and land once the lock is released; bounds and give-up are logged."""

from __future__ import annotations

import asyncio
import json
import logging
import select
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index import writes as index_writes
from mcp_tasks_jupyter.index.backend import IndexBackend
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex
from tests.support import eventually, start_demo_http
from tests.support.processes import python_env

from .index_lock import WAIT, LockHolder, stored

DEMO = ServerIdentity("demo", "http://127.0.0.1:1/mcp", "http", "2025-11-25", "2025-11-25")


def made(path: Path) -> TaskIndex:
    index = TaskIndex(path)
    index.records()  # the file and its schema exist before anyone locks it
    return index


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_writes_on_the_loop_return_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    old = index.add(DEMO, "slow_compute", {"n": 1}, task_id="t1")
    assert old is not None
    await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the batch written")
    with LockHolder(path) as holder:
        index.update(old, task_id="t1", status="working", status_message="half way", ttl_ms=60000)
        index.update(old, task_id=None, status="completed", status_message=None, result={"content": []})
        new = index.add(DEMO, "slow_compute", {"n": 2}, task_id="t2", notebook="a.ipynb")
        assert new is not None  # its id is final although the insert waits
        index.update(new, task_id=None, status="failed", status_message="boom")
        index.update(new, task_id=None, status="failed", status_message="boom", out_var="out")
        # Every call above returned while the lock is held: the holder lets go only when told, below.
        assert holder.holding
        assert index.pending() == 2
        assert stored(path, old, "status") == ("working",) and stored(path, new, "status") is None
        assert [r.id for r in index.records()] == [old]  # a read on the loop does not wait for the lock either
    await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the kept changes written")
    # the latest state of each row won, with what earlier changes set and later ones left alone
    assert stored(path, old, "task_id", "status", "status_message", "ttl_ms", "result") == (
        "t1",
        "completed",
        None,
        60000,
        json.dumps({"content": []}, separators=(",", ":")),
    )
    assert stored(path, new, "task_id", "status", "status_message", "notebook", "out_var") == (
        "t2",
        "failed",
        "boom",
        "a.ipynb",
        "out",
    )
    assert [r.id for r in index.records()] == [old, new]


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_task_runs_and_is_recorded_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    with start_demo_http("--poll-interval", "100") as url:
        async with mtj.connect(url, protocol_version="2025-11-25", index=index) as client:
            with LockHolder(path) as holder:
                handle = await client.start_task("slow_compute", {"seconds": 0.3, "steps": 3, "label": "busy"})
                result = await asyncio.wait_for(handle, WAIT)
                # the task ran to its end (its Recorder writing on every change) with the lock still held
                assert holder.holding and result.structured["label"] == "busy"
                row = handle.index_row
                assert row is not None and stored(path, row, "status") is None
            await eventually(
                lambda: stored(path, row, "status") == ("completed",),
                timeout=WAIT,
                what="the task's record written",
            )
    record = index.get(row)
    assert record is not None and record.task_id == handle.task_id and record.result == result.raw


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_close_writes_what_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    row = index.add(DEMO, "slow_compute", {})
    assert row is not None
    with LockHolder(path) as holder:
        index.update(row, task_id="t9", status="completed", status_message=None, result={"content": []})
        holder.release()  # blocks this loop: the scheduled retry cannot have run yet
    assert index.pending() == 1
    index.close()
    assert stored(path, row, "task_id", "status") == ("t9", "completed")


def test_changes_kept_on_a_loop_that_ended_are_written_by_the_next_use(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    row = index.add(DEMO, "slow_compute", {})
    assert row is not None

    async def on_a_loop() -> None:
        index.update(row, task_id="t3", status="completed", status_message=None)

    with LockHolder(path):
        asyncio.run(on_a_loop())  # the retry it scheduled dies with its loop
    assert index.pending() == 1
    assert [r.status for r in index.records()] == ["completed"]  # this read (no loop) wrote it first
    assert index.pending() == 0


def test_without_a_loop_a_write_waits_then_keeps_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_writes, "BLOCKING_BUSY_TIMEOUT_MS", 50)  # scripts may block: here briefly
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    row = index.add(DEMO, "slow_compute", {})
    assert row is not None
    with LockHolder(path):
        index.update(row, task_id="t4", status="completed", status_message=None)
        assert index.pending() == 1
    index.close()
    assert stored(path, row, "status") == ("completed",)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_change_kept_too_long_is_given_up_and_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(index_writes, "GIVE_UP_S", 0.0)
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    row = index.add(DEMO, "slow_compute", {}, task_id="t5")
    assert row is not None
    await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the batch written")
    with caplog.at_level(logging.ERROR, logger="mcp_tasks_jupyter"), LockHolder(path):
        index.update(row, task_id="t5", status="completed", status_message=None)
        await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the change given up")
    [given_up] = [r for r in caplog.records if "gave up" in r.getMessage()]
    assert f"row {row} (task t5)" in given_up.getMessage() and "busy" in given_up.getMessage()
    index.close()
    assert stored(path, row, "status") == ("working",)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_the_kept_changes_are_bounded_and_the_oldest_given_up_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(index_writes, "MAX_PENDING_ROWS", 2)
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    with caplog.at_level(logging.ERROR, logger="mcp_tasks_jupyter"), LockHolder(path):
        rows = [index.add(DEMO, "slow_compute", {"i": i}, task_id=f"b{i}") for i in range(3)]
        assert None not in rows and index.pending() == 2
    assert any("gave up 1 change" in r.getMessage() and "(task b0)" in r.getMessage() for r in caplog.records)
    await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the kept changes written")
    assert [r.task_id for r in index.records()] == ["b1", "b2"]


LOOP_WRITER = """
import asyncio, sys
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex
index = TaskIndex(sys.argv[1])
who = sys.argv[2]
identity = ServerIdentity("demo", "http://x/mcp")

async def main():
    for i in range(150):
        row = index.add(identity, "slow_compute", {"i": i, "who": who}, task_id=f"{who}-{i}")
        assert row is not None
        index.update(row, task_id=None, status="working", status_message="started")
        await asyncio.sleep(0)
        index.update(row, task_id=None, status="completed", status_message="done", result={"i": i})
    print("kept", index.pending(), flush=True)
    while index.pending():
        await asyncio.sleep(0.01)

asyncio.run(main())
index.close()
print("ok", flush=True)
"""


@pytest.mark.timeout(90)
def test_two_kernels_kept_waiting_on_their_loops_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    made(path).close()
    writers: list[subprocess.Popen[bytes]] = []
    try:
        with LockHolder(path):
            for who in ("a", "b"):
                writers.append(
                    subprocess.Popen(
                        [sys.executable, "-c", LOOP_WRITER, str(path), who],
                        env=python_env(),
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                    )
                )
            for writer in writers:  # both recorded everything while the lock was held, and wait
                assert writer.stdout is not None
                ready, _, _ = select.select([writer.stdout], [], [], WAIT)
                assert ready and writer.stdout.readline().strip() == b"kept 150", "a writer did not wait"
        for writer in writers:
            out, err = writer.communicate(timeout=60)
            assert writer.returncode == 0 and out.strip() == b"ok", err.decode()
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.communicate(timeout=WAIT)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute(
        "SELECT COUNT(*), COUNT(DISTINCT task_id) FROM tasks WHERE status = 'completed' "
        "AND status_message = 'done' AND result IS NOT NULL"
    ).fetchone() == (300, 300)
    db.close()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_changes_on_the_loop_are_written_together_in_one_batch(tmp_path: Path) -> None:
    # A thousand tasks changing at once make one transaction, written a moment later, not one each.
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    rows = [index.add(DEMO, "slow_compute", {"n": n}, task_id=f"t{n}") for n in range(200)]
    for row in rows:
        assert row is not None
        index.update(row, task_id=None, status="completed", status_message="done")
    assert index.pending() == len(rows)  # kept for the batch: nothing written yet
    await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the batch written")
    assert {stored(path, row, "status") for row in rows} == {("completed",)}
    assert [r.id for r in index.records()] == rows


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_batch_waiting_for_a_lock_waits_on_the_writers_thread_not_the_loop(tmp_path: Path) -> None:
    # Issue 33 ("never the kernel's loop waiting on the index"): a SQLite batch meeting another connection's
    # lock waits on the index's writer thread; the loop goes on ticking while the lock is held.
    path = tmp_path / "tasks.sqlite3"
    index = made(path)
    holder = sqlite3.connect(path, timeout=5, isolation_level=None)
    threads: set[str] = set()
    real_write = index_writes.write

    def recording(
        database: IndexBackend, batch: list[index_writes.RowChange], timeout_ms: int
    ) -> index_writes.Outcome:
        threads.add(threading.current_thread().name)
        return real_write(database, batch, timeout_ms)

    index_writes.write = recording
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.ensure_future(ticker())
    try:
        holder.execute("BEGIN IMMEDIATE")
        row = index.add(DEMO, "slow_compute", {"n": 1}, task_id="t1")
        assert row is not None
        await eventually(lambda: bool(threads), timeout=WAIT, what="the batch handed to the writer")
        seen = ticks
        await eventually(lambda: ticks > seen + 100, timeout=WAIT, what="the loop ticking while the lock is held")
        assert stored(path, row, "status") is None  # still held: nothing written
        holder.execute("COMMIT")
        await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the kept change written")
        assert stored(path, row, "task_id") == ("t1",)
        assert threads and all(name.startswith("mtj-index-writer") for name in threads)
    finally:
        stop.set()
        await ticking
        index_writes.write = real_write
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        index.close()
