"""The ``mcp-tasks`` command line (issue 16, item 5), run as a subprocess (``python -m mcp_tasks_jupyter``)
over the task index a client recorded in, against the demo server over HTTP."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex
from tests.support import start_demo_http
from tests.support.paths import REPO_ROOT
from tests.support.postgres import run_sql
from tests.support.processes import python_env

WAIT = 20.0


def cli(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m mcp_tasks_jupyter ARGS`` over this test's index (``MTJ_INDEX``)."""
    done = subprocess.run(
        [sys.executable, "-m", "mcp_tasks_jupyter", *args],
        capture_output=True,
        text=True,
        env=python_env(),
        timeout=90,
        check=False,
    )
    if ok:
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return done


def test_the_console_script_is_declared() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"]["mcp-tasks"] == "mcp_tasks_jupyter.exports.cli:main"
    assert "usage: mcp-tasks" in cli("--help").stdout


async def _record_tasks(url: str) -> dict[str, str]:
    """One finished task, two left running on the server when the client went away (task ids)."""
    async with mtj.connect(url, protocol_version="2025-11-25", index=TaskIndex()) as client:
        done = await client.start_task("slow_compute", {"seconds": 0.1, "steps": 1, "label": "done"})
        await asyncio.wait_for(done, WAIT)
        later = await client.start_task("slow_compute", {"seconds": 1.5, "steps": 3, "label": "later"})
        endless = await client.start_task("slow_compute", {"seconds": 60, "steps": 2, "label": "endless"})
        failing = await client.start_task(
            "failing_job", {"seconds": 0.1, "mode": "protocol_error", "message": "no"}
        )
        await asyncio.wait_for(asyncio.gather(failing, return_exceptions=True), WAIT)
        ids = {
            "done": done.task_id,
            "later": later.task_id,
            "endless": endless.task_id,
            "failing": failing.task_id,
        }
    return {k: v for k, v in ids.items() if v is not None}


@pytest.mark.timeout(240)
def test_list_show_result_cancel_export_clear(tmp_path: Path, index_env: str) -> None:
    with start_demo_http("--poll-interval", "100") as url:
        ids = asyncio.run(_record_tasks(url))
        gone = TaskIndex()
        gone.add(ServerIdentity("gone", "python -m gone", "stdio"), "echo", {}, task_id="st-1")
        gone.close()
        ended = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
        )
        # the kernel that started it has ended
        run_sql(index_env, "UPDATE tasks SET pid = ? WHERE task_id = 'st-1'", (int(ended.stdout),))

        listed = cli("list").stdout.splitlines()
        assert listed[0].split() == [
            "id", "server", "tool", "arguments", "status", "started", "task", "id", "notebook", "by"
        ]  # fmt: skip
        # ids by their first digits, as many as tell them apart (not 19 digits); the arguments shown
        first_id = listed[1].split()[0]
        assert 6 <= len(first_id) < 19 and json.loads(cli("show", first_id, "--json").stdout)["record"]
        assert any("label=later" in line for line in listed), listed
        assert len(listed) == 6 and any(ids["later"] in line and " working " in line for line in listed)
        rows = [json.loads(line) for line in cli("list", "--json", "--status", "completed").stdout.splitlines()]
        assert [r["task_id"] for r in rows] == [ids["done"]] and rows[0]["result_sha256"]
        assert cli("list", "--server", "nobody").stdout.startswith("no tasks recorded in")

        shown = cli("show", ids["failing"]).stdout
        assert "status: failed" in shown and "tool: failing_job" in shown and "error: TaskFailed" in shown
        record = json.loads(cli("show", ids["done"], "--json").stdout)["record"]
        assert json.loads(cli("show", str(record)[:12], "--json").stdout)["task_id"] == ids["done"]

        stored = json.loads(cli("result", ids["done"], "--json").stdout)
        assert stored["structuredContent"]["label"] == "done"
        # not stored: fetched from the server, which still has the task, and then stored
        fetched = json.loads(cli("result", ids["later"], "--json", "--timeout", "20").stdout)
        assert fetched["structuredContent"]["label"] == "later"
        assert json.loads(cli("show", ids["later"], "--json").stdout)["status"] == "completed"
        assert cli("result", ids["later"]).stdout.startswith("later: done in 3 steps")  # now stored: its text

        assert cli("cancel", ids["endless"], "--timeout", "20").stdout.strip().endswith(": cancelled")
        assert json.loads(cli("show", ids["endless"], "--json").stdout)["status"] == "cancelled"

    errors = {
        ("show", "no-such-task"): "no task 'no-such-task'",
        ("result", ids["failing"]): "ended failed without a result: TaskFailed",
        ("result", "st-1"): "runs on a stdio server (python -m gone), a process of the kernel, which has ended",
        ("cancel", ids["done"]): "has already ended (completed)",
    }
    for args, expected in errors.items():
        failed = cli(*args, ok=False)
        assert failed.returncode == 1 and failed.stdout == "", failed
        assert (
            failed.stderr.startswith("mcp-tasks: ")
            and expected in failed.stderr
            and failed.stderr.count("\n") == 1
        )
    assert cli("list", "--status", "bogus", ok=False).returncode == 2
    assert cli("show", ok=False).returncode == 2 and cli("show", "1", "--bogus", ok=False).returncode == 2
    # a task id may begin with "-" (random base64url): it is an ID, not an option
    assert "no task '-x9'" in cli("show", "-x9", ok=False).stderr

    out = tmp_path / "all.csv"
    assert cli("export", str(out)).stdout.strip() == f"exported the provenance of 5 tasks to {out}"
    assert len(mtj.read_export(out)) == 5
    assert "removed 4 finished task records" in cli("clear", "--finished").stdout  # the stdio one stays
    assert "removed 1 task record " in cli("clear").stdout
    assert cli("list").stdout.startswith("no tasks recorded")
    assert TaskIndex().describe() in cli("list").stdout  # the index of the kernels (MTJ_INDEX)
    assert "pw-" not in cli("list").stdout  # a database's password is never shown


def test_control_characters_from_a_server_never_reach_the_terminal(index_env: str) -> None:
    index = TaskIndex()
    row = index.add(ServerIdentity("evil", "http://127.0.0.1:1/mcp"), "echo", {}, task_id="e-1")
    assert row is not None
    index.update(
        row,
        task_id="e-1",
        status="completed",
        status_message="\x1b[2Jcleared",
        result={"content": [{"type": "text", "text": "\x1b]0;title\x07hi"}]},
    )
    index.close()
    shown = cli("show", "e-1").stdout + cli("result", "e-1").stdout + cli("list").stdout
    assert (
        "\x1b" not in shown
        and "\x07" not in shown
        and "\\x1b[2Jcleared" in shown
        and "\\x1b]0;title\\x07hi" in shown
    )
