"""A sweep in a real kernel that is SIGKILLed in the middle (issue 33 item 6): the same ``%mcp_map`` line,
with ``--resume`` or as it was, in a new kernel binds every result in order, and the demo server ran each
item's call once, but those the sweep's record says were sent again. Over HTTP the server outlives the
kernel (it keeps its tasks: only sends in flight at the kill, at most the limit's worth, go again); over
stdio the server is the kernel's child and dies with it, so the tasks it had are lost with it and each is
sent again, noted, by the new kernel's own server. Either way the server writes each ``tools/call`` it runs
to a file (``--count-arguments``): that file, not the client, is the server's own count. Nothing here
asserts a timing."""

from __future__ import annotations

import collections
import json
import os
import shlex
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.jupyter.kernel_harness import running_kernel, wait_gone
from tests.support.demo_server import demo_argv
from tests.support.paths import PYTHON
from tests.support.peers import LISTENING_LINE, START_TIMEOUT
from tests.support.postgres import run_sql
from tests.support.processes import python_env, spawn, wait_for_stdout

WAIT = 60  # seconds: a bound on every wait, never a speed claim
SIZE = 2000
LIMIT = 64
ITEMS = f"items = [{{'seconds': 0.2, 'steps': 1, 'label': f'i{{i}}'}} for i in range({SIZE})]"
LINE = f"-o res --limit {LIMIT} web:slow_compute --over items"


@contextmanager
def demo_target(transport: str, counts: Path) -> Iterator[str]:
    """What ``%mcp_connect web`` is given: the URL of a demo over HTTP (a process of the test's own), or the
    command of a demo over stdio (the kernel's child, started again by each kernel)."""
    args = ("--count-arguments", str(counts), "--poll-interval", "100")
    if transport == "stdio":
        yield shlex.join(demo_argv(*args, python=PYTHON))
        return
    with spawn(demo_argv("--http", "--port", "0", *args, python=PYTHON), env=python_env()) as server:
        yield wait_for_stdout(server, LISTENING_LINE, START_TIMEOUT).group(1)


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("transport", "resume"),
    [("http", "--resume "), ("http", ""), ("stdio", "--resume ")],
    ids=["http with --resume", "http the same line again", "stdio with --resume"],
)
def test_a_killed_kernel_s_sweep_resumes_in_a_new_kernel_in_order_and_once(
    tmp_path: Path, transport: str, resume: str
) -> None:
    counts = tmp_path / "calls.txt"
    counts.touch()
    location = str(tmp_path / "index" / "tasks.sqlite3")
    with demo_target(transport, counts) as url, running_kernel(tmp_path, MTJ_INDEX=location) as kernel:
        for cell in ("%load_ext mcp_tasks_jupyter", f"%mcp_connect web {url}", ITEMS):
            kernel.run(cell)
        kernel.run(f"b = %mcp_map {LINE}")
        sweep = kernel.value("b.sweep")
        deadline = time.monotonic() + WAIT
        while len(counts.read_text().splitlines()) < SIZE // 3:
            assert time.monotonic() < deadline, "the sweep did not get going"
            time.sleep(0.05)
        old = kernel.pid
        os.kill(old, signal.SIGKILL)
        assert wait_gone(old, 10)
        if transport == "stdio":  # its server sees its stdin close and goes: no call is counted after
            deadline = time.monotonic() + WAIT
            while _stdio_demo_of(old) is not None:
                assert time.monotonic() < deadline, "the killed kernel's stdio server did not stop"
                time.sleep(0.1)
        at_kill = len(counts.read_text().splitlines())
        assert at_kill < SIZE
        kernel.manager.restart_kernel(now=True)
        kernel.client.wait_for_ready(timeout=30)
        for cell in ("%load_ext mcp_tasks_jupyter", f"%mcp_connect web {url}", ITEMS):
            kernel.run(cell)
        run = kernel.run(f"b = %mcp_map {resume}{LINE}")  # the same line offers the resume, in one line
        assert f"resumed sweep {sweep}: " in run.stdout, str(run)
        deadline = time.monotonic() + WAIT
        while not kernel.value("'res' in globals()"):
            assert time.monotonic() < deadline, "-o res was never bound"
            time.sleep(0.3)
        labels = kernel.value("[r.structured['label'] for r in res]", timeout=WAIT)
        assert labels == [f"i{i}" for i in range(SIZE)]
        assert f"resumed sweep {sweep}" in kernel.value("repr(b.view().resumed)")
        kernel.run("import time; time.sleep(0.5)")  # the sweep's last marks land
        listed = kernel.run("%mcp_tasks --sweeps").stdout
        assert f"{sweep}  slow_compute on web: 2,000 items (2,000 ended" in listed and "finished" in listed, listed
    calls: collections.Counter[str] = collections.Counter(
        json.loads(line.partition("\t")[2])["label"] for line in counts.read_text().splitlines()
    )
    noted = {
        f"i{position}": note
        for position, note in run_sql(
            location, "SELECT position, note FROM sweep_items WHERE sweep = ? AND note IS NOT NULL", (sweep,)
        )
    }
    if transport == "http":  # the server kept its tasks: only sends in flight at the kill go again
        assert len(noted) <= LIMIT and all("in flight" in note for note in noted.values()), noted
    else:  # the server died with the kernel: what it had not finished is sent again, each noted
        assert noted and all(note.startswith("sent again") for note in noted.values()), noted
    for i in range(SIZE):
        label = f"i{i}"
        assert calls[label] == 1 or (label in noted and calls[label] == 2), (label, calls[label])


def _stdio_demo_of(kernel_pid: int) -> int | None:
    """The pid of a demo server whose parent was ``kernel_pid`` and that still runs (None: none)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), "")
        if b"mcp_tasks_jupyter.demo" in command and parent == str(kernel_pid):
            return int(entry.name)
    return None
