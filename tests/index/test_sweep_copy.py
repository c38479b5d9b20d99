"""Copying a task index copies its sweeps (issue 33): a machine's SQLite index copied into the team's
PostgreSQL database (``mcp-tasks copy``) and the team's copied back into a SQLite file (``copy_from``) keep
each sweep with its items in order, their states, task ids and records, and their match keys made again under
the target's key, so the copied sweep resumes there by its id from its records, sending nothing."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index.task_index import TaskIndex
from tests.support import start_demo_http
from tests.support.postgres import PostgresServer, run_sql
from tests.support.processes import python_env

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]
WAIT = 30.0
ITEMS = [{"seconds": 0.05, "steps": 1, "label": f"c{i}"} for i in range(12)]
ITEM_ROWS = "SELECT position, arguments, state, task_id, record, status, note, sends FROM sweep_items"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_tasks_jupyter", *args],
        capture_output=True, text=True, env=python_env(env), timeout=120, check=False,
    )  # fmt: skip


def sweep_of(location: str) -> tuple[list[tuple], list[tuple]]:
    return (
        run_sql(location, "SELECT id, tool, total, item_limit, finished_at FROM sweeps"),
        run_sql(location, f"{ITEM_ROWS} ORDER BY sweep, position"),
    )


async def test_sweeps_are_copied_from_sqlite_to_postgresql_and_back(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("MTJ_INDEX_KEY", raising=False)
    counts = tmp_path / "calls.txt"
    counts.touch()
    local = str(tmp_path / "laptop" / "tasks.sqlite3")
    team_url = postgres_server.database()
    team_key = secrets.token_hex(32)
    with start_demo_http("--count-arguments", str(counts)) as url:
        async with mtj.connect(url, index=local, protocol_version="2025-11-25") as client:
            batch = await client.map("slow_compute", ITEMS, limit=4)
            await batch.gather(timeout=WAIT)
            sweep = batch.sweep
            assert sweep is not None
            await batch.aclose("done")  # its last marks written
        calls = len(counts.read_text().splitlines())
        assert calls == len(ITEMS)
        env = {**os.environ, "MTJ_INDEX": team_url, "MTJ_INDEX_KEY": team_key}
        first = cli("copy", local, env=env)
        assert first.returncode == 0, first.stderr
        again = cli("copy", local, env=env)  # twice: the same rows, nothing doubled
        assert again.returncode == 0, again.stderr
        assert first.stdout.startswith(f"copied {len(ITEMS)} task records and 1 sweep from "), first.stdout
        assert again.stdout.startswith("copied 0 task records from "), again.stdout  # the sweep was there
        assert sweep_of(team_url) == sweep_of(local)
        assert sweep in cli("sweeps", env=env).stdout
        # the match keys were made again under the team's key: the same items match there
        [(local_key,)] = run_sql(local, "SELECT items_key FROM sweeps")
        [(team_items_key,)] = run_sql(team_url, "SELECT items_key FROM sweeps")
        assert team_items_key != local_key
        monkeypatch.setenv("MTJ_INDEX_KEY", team_key)
        team = TaskIndex(team_url)
        assert [k for (k,) in run_sql(team_url, "SELECT args_key FROM sweep_items ORDER BY position")] == [
            team.arguments_key(args) for args in ITEMS
        ]
        # resumed from the team's index by its id, with its items: every result from its record, in order
        async with mtj.connect(url, index=team_url, protocol_version="2025-11-25") as client:
            resumed = await client.map("slow_compute", ITEMS, limit=4, resume=sweep)
            assert resumed.resumed is not None and resumed.resumed.before == len(ITEMS), resumed.said
            results = await resumed.gather(timeout=WAIT)
            assert [r.structured["label"] for r in results] == [i["label"] for i in ITEMS]
        assert len(counts.read_text().splitlines()) == calls  # nothing was sent again
    # and back: the team's index copied into another machine's SQLite file
    monkeypatch.delenv("MTJ_INDEX_KEY")
    other = TaskIndex(tmp_path / "other" / "tasks.sqlite3")
    count = other.copy_from(TaskIndex(team_url))
    copied, _ = count
    assert copied == len(ITEMS) and count.sweeps == 1
    other.close()
    assert sweep_of(str(other.path)) == sweep_of(local)
