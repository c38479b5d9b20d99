"""The kernel runtime: in a real kernel (interrupts, many tasks at once, shutdown and restart) and in
plain asyncio (the same API, replacing connections, the exit hook on a stopped loop)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.errors import UsageError
from mcp_tasks_jupyter.jupyter.runtime import Runtime
from tests.jupyter.kernel_harness import (
    DEMO_COMMAND,
    Kernel,
    kill_if_alive,
    process_gone,
    running_kernel,
    wait_gone,
)
from tests.support import demo_stdio_argv, eventually, start_demo_http
from tests.support.paths import PYTHON
from tests.support.peers import LISTENING_LINE, START_TIMEOUT
from tests.support.processes import python_env, spawn, wait_for_stdout

WAIT = 20  # seconds: a bound on every wait
STDIO_PID = "get_runtime().client({name!r}).transport.describe()['pid']"
#: A cell's first line, written to stderr: the test interrupts once it has read it (the cell is running),
#: not after a guess of how long the kernel takes to get there.
AWAITING = "import sys; sys.stderr.write('awaiting\\n'); sys.stderr.flush()\n"


#: The traceback IPython stored for the last cell that failed (its history's record of the exception).
STORED_TRACEBACK = "(lambda e: e[max(e)]['traceback'])(get_ipython().history_manager.exceptions)"


def start(kernel: Kernel, name: str = "demo") -> int:
    """Load the magics, connect a stdio demo server as ``name``; the server's pid."""
    kernel.run(
        "%load_ext mcp_tasks_jupyter\nimport asyncio\nfrom mcp_tasks_jupyter.jupyter.runtime import get_runtime"
    )
    kernel.run(f"%mcp_connect {name} {DEMO_COMMAND}")
    return kernel.value(STDIO_PID.format(name=name))


def test_interrupting_a_cell_never_cancels_its_task(tmp_path: Path) -> None:
    with running_kernel(tmp_path) as kernel:
        server_pid = start(kernel)
        kernel.run("h = %mcp_task demo:slow_compute seconds=3")
        # 1. a cell awaiting the handle: one line naming it, no traceback
        waiting = kernel.submit(f"{AWAITING}await h")
        kernel.wait_for_stream(waiting, "awaiting")
        kernel.interrupt()
        run = kernel.collect(waiting, "await h", timeout=10)
        assert run.status == "error" and run.reply["ename"] in ("CancelledError", "KeyboardInterrupt"), str(run)
        assert run.errors == [], "a traceback was shown"
        line = run.stdout.strip()
        assert line.startswith("still running in the background: h = demo:slow_compute seconds=3 (task "), line
        assert line.endswith("; `await h` for its result, `%mcp_cancel h` to stop it") and "\n" not in line
        assert kernel.value("(h.done(), h.status)") == (False, "working")
        assert not process_gone(server_pid), "the interrupt reached the stdio server"
        # IPython keeps that line as the cell's stored traceback, not a traceback it formats afterwards
        assert kernel.value(STORED_TRACEBACK) == [line]
        # 2. a cell waiting inside the magic (--wait): the handle is bound to the cell's variable
        waiting = kernel.submit("r = %mcp_task --wait demo:slow_compute seconds=2 label=waited")
        kernel.wait_for(waiting, "display_data")  # the task's view: the server has it, the magic waits
        kernel.interrupt()
        run = kernel.collect(waiting, "--wait", timeout=10)
        assert run.status == "error" and run.errors == [], str(run)
        assert run.stdout.strip().startswith(
            "still running in the background: r = demo:slow_compute label=waited seconds=2 (task "
        ), run.stdout
        assert kernel.value("(type(r).__name__, r is get_runtime().handles[-1], r.done())") == (
            "TaskHandle",
            True,
            False,
        )
        # an interrupt that has nothing to do with a task keeps its traceback
        waiting = kernel.submit(f"{AWAITING}import time\ntime.sleep(5)")
        kernel.wait_for_stream(waiting, "awaiting")
        kernel.interrupt()
        run = kernel.collect(waiting, "sleep", timeout=10)
        assert run.reply["ename"] == "KeyboardInterrupt" and run.errors and "still running" not in run.stdout
        # both tasks finish normally afterwards
        kernel.run(
            "first = await asyncio.wait_for(h, 20)\nsecond = await asyncio.wait_for(r, 20)",
            timeout=25,
        )
        assert kernel.value("(h.status, first.structured['value'], second.structured['label'])") == (
            "completed",
            385,
            "waited",
        )
        assert not process_gone(server_pid)


def test_a_cell_interrupted_while_its_task_is_created_says_so_and_binds_it_once_created(tmp_path: Path) -> None:
    """The server holds the creation (its process stopped): one interrupt ends the cell with one line,
    the creation goes on, and the cell's variable gets the task's handle once the server answers. (The
    cell used to end only seconds later, the first time in a kernel: IPython formatted the whole
    traceback for its history, and a second interrupt meanwhile lost the cell's reply.)"""
    with running_kernel(tmp_path) as kernel:
        server_pid = start(kernel)
        os.kill(server_pid, signal.SIGSTOP)
        try:
            # the marker comes from the loop once the cell awaits (call_soon runs only when the cell yields)
            waiting = kernel.submit(
                "import asyncio, sys\n"
                "asyncio.get_running_loop().call_soon(lambda: print('awaiting', file=sys.stderr, flush=True))\n"
                "r = %mcp_task --wait demo:slow_compute seconds=0.5 label=held"
            )
            kernel.wait_for_stream(waiting, "awaiting")
            kernel.interrupt()
            run = kernel.collect(waiting, "held", timeout=WAIT)
        finally:
            os.kill(server_pid, signal.SIGCONT)
        assert run.status == "error" and run.errors == [], str(run)
        line = (
            "still being started in the background: demo:slow_compute label=held seconds=0.5; "
            "`r` is bound to it once the server has it"
        )
        assert run.stdout.strip() == line, run.stdout
        assert kernel.value(STORED_TRACEBACK) == [line]
        kernel.run(
            "for _ in range(200):\n    if 'r' in globals(): break\n    await asyncio.sleep(0.05)\n"
            "done = await asyncio.wait_for(r, 20)",
            timeout=25,
        )
        assert kernel.value("(type(r).__name__, done.structured['label'])") == ("TaskHandle", "held")


def test_fifty_tasks_at_once(tmp_path: Path) -> None:
    with running_kernel(tmp_path) as kernel:
        start(kernel)
        created = kernel.run(
            "hs = []\nfor i in range(50):\n"
            "    h = %mcp_task demo:slow_compute seconds=6 steps=4 label=t{i}\n"
            "    hs.append(h)"
        )
        assert created.reply["status"] == "ok"
        # a cell is answered while the tasks run (how fast is benchmarks/kernel_latency.py's question)
        assert kernel.run("1 + 1").reply["status"] == "ok"
        assert kernel.value("(len(hs), len({h.task_id for h in hs}), sum(h.done() for h in hs) < 50)") == (
            50,
            50,
            True,
        )
        kernel.run("rs = await asyncio.wait_for(asyncio.gather(*hs), 30)", timeout=35)
        labels = kernel.value("[r.structured['label'] for r in rs]")
        assert labels == [f"t{i}" for i in range(50)]
        assert kernel.value("({h.status for h in hs}, len(get_runtime().handles))") == ({"completed"}, 50)


async def _task_status(url: str, task_id: str) -> str:
    async with mtj.connect(url) as client:
        return (await client.dialect.get(task_id)).status


def test_shutdown_and_restart_close_connections_and_leave_tasks_on_the_server(tmp_path: Path) -> None:
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text('c.InteractiveShellApp.extensions = ["mcp_tasks_jupyter"]\n')
    argv = [PYTHON, "-m", "mcp_tasks_jupyter.demo", "--http", "--port", "0", "--log-level", "info"]
    with spawn(argv, env=python_env()) as server:
        url = wait_for_stdout(server, LISTENING_LINE, START_TIMEOUT).group(1)
        with running_kernel(tmp_path) as kernel:
            # the extension was loaded by the kernel's config: no %load_ext
            kernel.run(f"%mcp_connect web {url}")
            kernel.run("from mcp_tasks_jupyter.jupyter.runtime import get_runtime")
            kernel.run(f"%mcp_connect local {DEMO_COMMAND}")
            kernel.run(
                "hw = %mcp_task web:slow_compute seconds=4 label=survivor\n"
                "hl = %mcp_task local:slow_compute seconds=60"
            )
            task_id = kernel.value("hw.task_id")
            stdio_pid = kernel.value(STDIO_PID.format(name="local"))
            old_kernel = kernel.pid
            old_process = kernel.manager.provisioner.process
            try:
                kernel.manager.restart_kernel(now=False)
                assert wait_gone(old_kernel, 5), "the old kernel is still running"
                # it ended on its own (a kernel that had to be killed ends with SIGKILL: -9)
                assert old_process.wait(5) == 0, f"the kernel was stopped with {old_process.returncode}"
                assert wait_gone(stdio_pid, 5), "the stdio server outlived its kernel"
            finally:
                kill_if_alive(stdio_pid)
            output = server.output()
            if "HTTP session" in output:  # a stateful session (the stateless wire has none to end)
                assert "deleted" in output, "the HTTP session was not closed at exit"
            assert asyncio.run(_task_status(url, task_id)) in ("working", "completed")
            kernel.client.wait_for_ready(timeout=30)
            assert "MCP servers" in kernel.run("%mcp_servers").displays()[0]  # loaded again by config
            kernel.run(f"%mcp_connect web {url}")
            run = kernel.run(f"r = %mcp_result web:{task_id}", timeout=20)
            assert run.status == "ok"
            assert kernel.value("(r.structured['label'], r.structured['value'])") == ("survivor", 385)


# -- the same runtime outside a kernel (plain asyncio) -----------------------------------------------


@pytest.mark.anyio
async def test_runtime_in_plain_asyncio() -> None:
    runtime = Runtime()
    try:
        client = await runtime.connect("demo", demo_stdio_argv("--poll-interval", "100"))
        assert runtime.client() is client and runtime.client("demo") is client
        with pytest.raises(UsageError, match=r"no server named 'x' is connected \(connected: demo\)"):
            runtime.client("x")
        handle = await runtime.start_task(None, "slow_compute", {"seconds": 0.3, "steps": 3})
        assert runtime.handles == [handle]
        assert runtime.find(handle.task_id) is handle and runtime.find(handle) is handle
        assert runtime.find("no-such-id") is None
        assert (await handle).structured["value"] == 14
        # a preset answer, then the question handler, answer the tasks' questions
        research = {"topic": "tides", "ambiguous": True, "stage_seconds": 0.05}
        preset = await runtime.start_task(
            "demo", "research", research, answers={"interpretation": "tides (economics)"}
        )
        assert (await asyncio.wait_for(preset, WAIT)).structured["interpretation"] == "tides (economics)"
        asked: list[Any] = []

        async def ask(handle: Any, params: dict[str, Any]) -> dict[str, Any]:
            asked.append(handle)
            return {"action": "accept", "content": {"interpretation": "tides (history)"}}

        runtime.question_handler = ask
        answered = await runtime.start_task("demo", "research", research)
        assert (await asyncio.wait_for(answered, WAIT)).structured["interpretation"] == "tides (history)"
        assert asked == [answered]
        # with nobody to answer, the question is declined
        runtime.question_handler = None
        declined = await runtime.start_task("demo", "research", research)
        refusal = await asyncio.wait_for(declined, WAIT)
        assert refusal.is_error and "declined" in refusal.text
        # cancelling the caller never cancels the creation: the task is still made and tracked
        caller = asyncio.ensure_future(runtime.start_task("demo", "slow_compute", {"seconds": 0.2}))
        await asyncio.sleep(0)
        caller.cancel()
        await eventually(lambda: len(runtime.handles) == 5, timeout=WAIT, what="the creation")
        assert (await asyncio.wait_for(runtime.handles[-1], WAIT)).structured["seconds"] == 0.2
    finally:
        await runtime.aclose()
    assert not runtime.clients
    with pytest.raises(UsageError, match="no MCP server is connected"):
        runtime.client()


@pytest.mark.anyio
async def test_replacing_a_connection_leaves_tasks_on_the_server() -> None:
    runtime = Runtime()
    with start_demo_http("--poll-interval", "100") as url:
        try:
            await runtime.connect("web", url)
            first = await runtime.start_task("web", "slow_compute", {"seconds": 1, "steps": 2, "label": "kept"})
            await runtime.connect("web", url)  # the same name again: the old connection is closed
            with pytest.raises(mtj.TaskLost, match=f"resume with %mcp_result web:{first.task_id}"):
                await asyncio.wait_for(first, WAIT)
            resumed = runtime.attach(first.task_id, "web")
            assert resumed is not first and runtime.find(first.task_id) is resumed
            assert (await asyncio.wait_for(resumed, WAIT)).structured["label"] == "kept"
            with pytest.raises(UsageError, match="not a usable connection name"):
                await runtime.connect("a:b", url)
        finally:
            await runtime.aclose()


def test_exit_hook_closes_everything_on_the_stopped_loop() -> None:
    loop = asyncio.new_event_loop()
    runtime = Runtime()
    try:

        async def setup() -> int:
            client = await runtime.connect("demo", demo_stdio_argv())
            await runtime.start_task(None, "slow_compute", {"seconds": 30})
            return client.transport.describe()["pid"]

        pid = loop.run_until_complete(asyncio.wait_for(setup(), WAIT))
        runtime.close_at_exit()  # what atexit runs once the kernel's loop has stopped (bounded: EXIT_TIMEOUT_S)
        assert wait_gone(pid, 5) and not runtime.clients
    finally:
        loop.close()
