"""Durable tasks in a real kernel: after a restart, ``%mcp_tasks --resume`` picks up the notebook's
unfinished tasks from the task index and binds their ``-o`` variables when they complete."""

from __future__ import annotations

import time
from pathlib import Path

from tests.jupyter.kernel_harness import running_kernel, wait_gone
from tests.support.paths import PYTHON
from tests.support.peers import LISTENING_LINE, START_TIMEOUT
from tests.support.postgres import run_sql
from tests.support.processes import python_env, spawn, wait_for_stdout

WAIT = 30  # seconds: a bound on every wait
NOTEBOOK = "analysis/durable.ipynb"


def test_resume_after_a_kernel_restart_binds_the_out_variable(tmp_path: Path, index_location: str) -> None:
    argv = [PYTHON, "-m", "mcp_tasks_jupyter.demo", "--http", "--port", "0"]
    with spawn(argv, env=python_env()) as server:
        url = wait_for_stdout(server, LISTENING_LINE, START_TIMEOUT).group(1)
        with running_kernel(tmp_path, JPY_SESSION_NAME=NOTEBOOK, MTJ_INDEX=index_location) as kernel:
            kernel.run("%load_ext mcp_tasks_jupyter")
            kernel.run(f"%mcp_connect web {url}")
            kernel.run("h = %mcp_task -o out web:slow_compute seconds=5 label=durable")
            task_id = kernel.value("h.task_id")
            old_kernel = kernel.pid
            kernel.manager.restart_kernel(now=False)
            assert wait_gone(old_kernel, 10), "the old kernel is still running"
            kernel.client.wait_for_ready(timeout=30)
            # the index outlived the kernel: the task is still unfinished there, with its -o variable
            [row] = run_sql(
                index_location, "SELECT status, out_var, notebook, target FROM tasks WHERE task_id = ?", (task_id,)
            )
            assert row == ("working", "out", NOTEBOOK, url), row
            kernel.run("%load_ext mcp_tasks_jupyter")
            kernel.run(f"%mcp_connect web {url}")
            assert kernel.value("'out' in globals()") is False
            run = kernel.run("%mcp_tasks --resume")
            assert "resumed 1 task" in run.stdout, str(run)
            assert any("slow_compute label=durable seconds=5 on web" in text for text in run.displays()), (
                run.displays()
            )
            deadline = time.monotonic() + WAIT
            while not kernel.value("'out' in globals()"):
                assert time.monotonic() < deadline, "the -o variable was never bound"
                time.sleep(0.3)
            assert kernel.value("(out.structured['label'], out.structured['value'])") == ("durable", 385)
            # The kernel writes the index in batches (one transaction per 50 ms): wait for this one.
            deadline = time.monotonic() + WAIT
            while True:
                [status] = run_sql(
                    index_location, "SELECT status, result IS NOT NULL FROM tasks WHERE task_id = ?", (task_id,)
                )
                if status in (("completed", 1), ("completed", True)) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert status in (("completed", 1), ("completed", True)), status
            # nothing is left to resume; --clear removes the finished record
            assert "resumed 0 tasks" in kernel.run("%mcp_tasks --resume").stdout
            assert "removed 1 finished task record" in kernel.run("%mcp_tasks web --clear").stdout
            assert run_sql(index_location, "SELECT COUNT(*) FROM tasks") == [(0,)]
