"""The task index on each backend (SQLite, PostgreSQL): record writes per second, a cache lookup's latency,
and what keeping 1,000 live tasks' records current costs the kernel's loop.

    python benchmarks/index_backends.py [--tasks N] [--seconds S] [--tiny] [--json]

Both run on this machine: the SQLite file in a temporary directory, PostgreSQL on a throwaway server of
its own (tests/support/postgres.py: Debian's PostgreSQL 15 on 127.0.0.1, password authentication over
TCP), so the network between kernel and database is loopback: a team's database across a LAN adds its
round trips to the lookup (not to the writes, which are batched off the loop). Rows, per backend:

* record changes/s: N tasks recorded and each updated 9 times (status, progress, then its result) from a
  running asyncio loop as a kernel does, batched by the index; measured until every change is written.
  Anchor: as many inserts and updates of a bare table by the bare driver (sqlite3 / psycopg
  ``executemany``, one transaction): the least the database itself takes.
* cache lookup: ``TaskIndex.cached`` (the lookup ``cache=True`` makes) for a call recorded among N;
  median of 200. Anchor: the bare driver's ``SELECT`` of one row by its primary key, same connection kind.
* loop CPU of 1,000 live tasks' upkeep: each task's record updated once a second (spread over the second)
  for S seconds; the loop thread's CPU (``time.thread_time``) as a share of a core. Anchor: the same
  updates made to a dict (the least a kernel does to know its tasks' state). PostgreSQL writes on a
  thread of its own, so its loop share is what the kernel feels; the writer's CPU is printed in a note.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg
from _common import Row, emit, parser

from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex
from tests.support.postgres import PostgresServer

SERVER = ServerIdentity("bench", "http://127.0.0.1:1/mcp", "http", "2025-11-25", "2025-11-25")
UPDATES = 9
LOOKUPS = 200


def _arguments(i: int) -> dict[str, object]:
    return {"topic": f"topic-{i}", "depth": i % 5, "label": "benchmark"}


async def _writes_per_second(index: TaskIndex, n: int) -> float:
    """Changes per second through the index from a running loop, until all are written."""
    start = time.perf_counter()
    rows = [index.add(SERVER, "research", _arguments(i), task_id=f"t{i}") for i in range(n)]
    for step in range(UPDATES):
        for i, row in enumerate(rows):
            assert row is not None
            done = step == UPDATES - 1
            index.update(
                row,
                task_id=f"t{i}",
                status="completed" if done else "working",
                status_message=f"step {step}/{UPDATES}",
                result={"content": [{"type": "text", "text": f"result {i}"}], "isError": False} if done else None,
            )
        await asyncio.sleep(0)  # the loop turns between rounds, as between polls
    while index.pending():
        await asyncio.sleep(0.005)
    index.flush()
    return n * (UPDATES + 1) / (time.perf_counter() - start)


def _bare_rows(n: int) -> list[tuple[object, ...]]:
    return [(i + 1, "research", json.dumps(_arguments(i)), f"t{i}", "completed", time.time()) for i in range(n)]


def _bare_updates(n: int, step: int) -> list[tuple[object, ...]]:
    return [("completed" if step == UPDATES - 1 else "working", f"step {step}/{UPDATES}", i + 1) for i in range(n)]


def _bare_sqlite(path: Path, n: int) -> float:
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, tool TEXT, arguments TEXT, task_id TEXT, status TEXT, at REAL, "
        "message TEXT)"
    )
    start = time.perf_counter()
    with db:
        db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, NULL)", _bare_rows(n))
        for step in range(UPDATES):
            db.executemany("UPDATE t SET status = ?, message = ? WHERE id = ?", _bare_updates(n, step))
    elapsed = time.perf_counter() - start
    db.close()
    return n * (UPDATES + 1) / elapsed


def _bare_postgres(url: str, n: int) -> float:
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "CREATE TABLE t (id BIGINT PRIMARY KEY, tool TEXT, arguments TEXT, task_id TEXT, status TEXT, "
            "at DOUBLE PRECISION, message TEXT)"
        )
        start = time.perf_counter()
        with db.transaction(), db.cursor() as cursor:
            cursor.executemany("INSERT INTO t VALUES (%s, %s, %s, %s, %s, %s, NULL)", _bare_rows(n))
            for step in range(UPDATES):
                cursor.executemany("UPDATE t SET status = %s, message = %s WHERE id = %s", _bare_updates(n, step))
        return n * (UPDATES + 1) / (time.perf_counter() - start)


def _median_ms(call: Callable[[], object], times: int = LOOKUPS) -> float:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _bare_lookup_sqlite(path: Path) -> float:
    db = sqlite3.connect(path)
    try:
        return _median_ms(lambda: db.execute("SELECT * FROM t WHERE id = ?", (7,)).fetchone())
    finally:
        db.close()


def _bare_lookup_postgres(url: str) -> float:
    with psycopg.connect(url, autocommit=True) as db:
        return _median_ms(lambda: db.execute("SELECT * FROM t WHERE id = %s", (7,)).fetchone())


async def _upkeep_share(update: Callable[[int, int], None], n: int, seconds: float) -> float:
    """The loop thread's CPU share of a core while ``update(i, tick)`` runs for each of ``n`` tasks once a
    second, spread over the second (as polls are)."""
    loop = asyncio.get_running_loop()
    slot = 1.0 / n
    start_cpu, start = time.thread_time(), loop.time()
    tick = 0
    while loop.time() - start < seconds:
        second = loop.time()
        for i in range(n):
            due = second + i * slot
            delay = due - loop.time()
            if delay > 0.002:
                await asyncio.sleep(delay)
            update(i, tick)
        tick += 1
        rest = second + 1.0 - loop.time()
        if rest > 0:
            await asyncio.sleep(rest)
    return (time.thread_time() - start_cpu) / (loop.time() - start) * 100


def _index_upkeep(index: TaskIndex, n: int, seconds: float) -> tuple[float, float]:
    """The loop's CPU share, and the index writer thread's CPU seconds (measured before it ends)."""
    rows = [index.add(SERVER, "research", _arguments(i), task_id=f"live{i}") for i in range(n)]

    def update(i: int, tick: int) -> None:
        row = rows[i]
        assert row is not None
        index.update(row, task_id=f"live{i}", status="working", status_message=f"step {tick}")

    async def run() -> tuple[float, float]:
        # The process's CPU beyond the loop thread's is the index writer's (no other thread runs here).
        process, loop_thread = time.process_time(), time.thread_time()
        share = await _upkeep_share(update, n, seconds)
        while index.pending():
            await asyncio.sleep(0.01)
        return share, (time.process_time() - process) - (time.thread_time() - loop_thread)

    return asyncio.run(run())


def _dict_upkeep(n: int, seconds: float) -> float:
    states: dict[int, dict[str, object]] = {}

    def update(i: int, tick: int) -> None:
        states[i] = {"task_id": f"live{i}", "status": "working", "status_message": f"step {tick}"}

    return asyncio.run(_upkeep_share(update, n, seconds))


def measure(backend: str, location: str, bare: tuple[float, float], n: int, seconds: float) -> list[Row]:
    """The three rows of one backend; ``bare``: the bare driver's changes/s and lookup (ms)."""
    bare_writes, bare_lookup = bare
    index = TaskIndex(location)
    index.check()
    writes = asyncio.run(_writes_per_second(index, n))
    index.close()
    index = TaskIndex(location)
    lookup = _median_ms(lambda: index.cached(SERVER.target, "research", _arguments(n // 2)))
    hit = index.cached(SERVER.target, "research", _arguments(n // 2))
    assert hit is not None, "the cache lookup found nothing: the benchmark measures nothing"
    share, writer = _index_upkeep(index, 1000, seconds)
    index.close()
    plain = _dict_upkeep(1000, seconds)
    note = f"{backend}: the index's writer thread used {writer / seconds * 100:.1f}% of a core in the upkeep run"
    return [
        Row(
            f"record changes/s, {backend} (batched, from a loop)",
            writes,
            "bare driver, one transaction",
            bare_writes,
            "changes/s",
        ),
        Row(
            f"cache lookup, {backend} (TaskIndex.cached)", lookup, "bare SELECT by primary key", bare_lookup, "ms"
        ),
        Row(
            f"loop CPU, 1000 live tasks' records, {backend}",
            share,
            "the same updates to a dict",
            plain,
            "% core",
            note=note if backend == "postgresql" else "",
        ),
    ]


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--tasks", type=int, default=2000, help="tasks recorded for the write and lookup rows")
    p.add_argument("--seconds", type=float, default=10.0, help="how long the upkeep runs")
    args = p.parse_args()
    n, seconds = (200, 2.0) if args.tiny else (args.tasks, args.seconds)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_DATA_HOME"] = tmp  # the installation key and any kept file: this run's own
        os.environ["MTJ_INDEX_KEY"] = secrets.token_hex(32)  # as a team sharing its cache sets it
        bare_file = Path(tmp) / "bare.sqlite3"
        bare = (_bare_sqlite(bare_file, n), _bare_lookup_sqlite(bare_file))
        rows += measure("sqlite", str(Path(tmp) / "tasks.sqlite3"), bare, n, seconds)
        with PostgresServer() as server:
            bare_url = server.database()
            bare = (_bare_postgres(bare_url, n), _bare_lookup_postgres(bare_url))
            rows += measure("postgresql", server.database(), bare, n, seconds)
    emit(rows, args.json)


if __name__ == "__main__":
    main()
