"""What a study carries away tells the truth (issue 20): a tool error or a declined question is
recorded as what it was, never as ``completed``, in the task index, the command line and the
provenance export; an export made right after ``await`` says what the handle knows; older indexes are
re-derived on upgrade; each record names who started it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import sys
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.exports.cli import _stdio_reach
from mcp_tasks_jupyter.index.database import SCHEMA
from mcp_tasks_jupyter.index.task_index import SCHEMA_VERSION, ServerIdentity, TaskIndex
from mcp_tasks_jupyter.jupyter.magics import _as_written
from tests.client.test_cli import cli
from tests.support import demo_stdio_argv

pytestmark = pytest.mark.anyio
WAIT = 20.0


async def test_a_tool_error_is_recorded_as_an_error_and_an_export_after_await_is_complete(
    tmp_path: Path, index_env: str
) -> None:
    index = TaskIndex()  # the kernels' index ($MTJ_INDEX of this test)
    async with mtj.connect(demo_stdio_argv(), index=index) as client:
        args = {"seconds": 0, "mode": "tool_error", "message": "the instrument is offline"}
        handle = await client.start_task("failing_job", args)
        result = await asyncio.wait_for(handle, WAIT)
        assert result.is_error
        # the handle says the outcome, as the index does, with the server's own word beside it (issue 30)
        assert handle.status == "error" and handle.server_status in ("completed", "failed"), handle.server_status
        # right after await, through another index object on the same file (mtj.export's default)
        path = tmp_path / "provenance.jsonl"
        assert mtj.export([handle], path) == 1
        [row] = mtj.read_export(path)
        assert row["status"] == "error" and row["server_status"] != "error", row
        assert row["finished_at"] is not None and row["result_sha256"] is not None, row
        assert row["username"] and row["hostname"] == socket.gethostname()
        frame = mtj.to_dataframe([handle])
        assert list(frame["status"]) == ["error"]
        # a tool error is never a cache hit: the same call runs again
        again = await client.start_task("failing_job", args, cache=True)
        assert not again.cached
        await asyncio.wait_for(again, WAIT)
    listed = cli("list", "--status", "error", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert {r["tool"] for r in rows} == {"failing_job"} and all(r["status"] == "error" for r in rows)
    assert "failing_job" not in cli("list", "--status", "completed").stdout
    shown = cli("show", str(handle.index_row)).stdout
    assert "status: error" in shown and "server_status:" in shown
    assert cli("list", "--user", "somebody-else").stdout.startswith("no tasks recorded")
    assert "@" + socket.gethostname() in cli("list").stdout


async def test_a_declined_question_that_ends_the_task_is_recorded_declined(index_env: str) -> None:
    index = TaskIndex()
    async with mtj.connect(demo_stdio_argv(), index=index, elicitation_handler=_decline) as client:
        handle = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0})
        result = await asyncio.wait_for(handle, WAIT)
        assert result.is_error
        assert handle.status == "declined" and handle.server_status != "declined"
    [record] = TaskIndex().records()
    assert record.status == "declined" and record.server_status == handle.server_status


async def _decline(_request: object) -> dict[str, str]:
    return {"action": "decline"}


def _version_3_file(path: Path) -> None:
    """An index as schema version 3 wrote it: a tool error stored as ``completed``."""
    db = sqlite3.connect(path)
    version_3 = SCHEMA.replace(
        ",\n    server_status TEXT,\n    username TEXT,\n    hostname TEXT,\n    pid INTEGER", ""
    )
    assert "server_status" not in version_3
    db.executescript(version_3)
    insert = (
        "INSERT INTO tasks (id, server_name, target, tool, arguments, args_key, status, result, questions, "
        "recorded_at, updated_at) VALUES (?, 'demo', 'x', ?, '{}', 'k', ?, ?, ?, 1, 1)"
    )
    error = json.dumps({"content": [], "isError": True})
    declined = json.dumps([{"question": "q", "source": "person", "action": "decline", "content": None}])
    db.execute(insert, (1, "failing_job", "completed", error, None))
    db.execute(insert, (2, "research", "completed", error, declined))
    db.execute(insert, (3, "slow_compute", "completed", json.dumps({"content": []}), None))
    db.execute(insert, (4, "slow_compute", "working", None, None))
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()


def test_an_older_index_is_upgraded_with_true_outcomes(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    _version_3_file(path)
    records = {r.id: r for r in TaskIndex(path).records()}
    assert {k: (r.status, r.server_status) for k, r in records.items()} == {
        1: ("error", "completed"),
        2: ("declined", "completed"),
        3: ("completed", "completed"),
        4: ("working", "working"),
    }
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert TaskIndex(path).cached("x", "failing_job", {}) is None


def test_a_stdio_task_of_a_running_kernel_is_said_to_run_there(tmp_path: Path) -> None:
    index = TaskIndex(tmp_path / "tasks.sqlite3")
    server = ServerIdentity("demo", "python -m mcp_tasks_jupyter.demo", "stdio")
    row = index.add(server, "research", {"topic": "python"}, task_id="t1", status="input_required")
    assert row is not None
    record = index.get(row)
    assert record is not None and record.pid == os.getpid()  # this process stands for the kernel
    said = _stdio_reach(record)
    assert "still running" in said and "waits for input" in said and "ended" not in said, said


def test_the_command_as_it_ran_is_recorded() -> None:
    line = "demo {sys.executable} -m mcp_tasks_jupyter.demo"
    assert _as_written(line, [sys.executable, "-m", "mcp_tasks_jupyter.demo"]).startswith(sys.executable + " ")
    # any other expansion stays as written (it may hold a token)
    hidden = _as_written("x tool --key {os.environ['K']}", ["tool", "--key", "s3cret-value"])
    assert "s3cret-value" not in hidden
