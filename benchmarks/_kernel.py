"""A real IPython kernel for the benchmarks, driven through jupyter_client, always shut down.

The kernel runs this checkout (``PYTHONPATH``), with Jupyter and IPython config directories and the
task index in a temporary directory of its own. Every wait has a deadline.
"""

from __future__ import annotations

import ast
import contextlib
import math
import os
import queue
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import ROOT

CELL_TIMEOUT = 120.0  # seconds: a bound on every cell, never a speed claim


class KernelError(RuntimeError):
    """A cell failed or did not answer in time."""


class BenchKernel:
    """A started kernel and a blocking client on it. ``iopub`` keeps every iopub message drained."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.client = manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.iopub: list[dict[str, Any]] = []

    @property
    def pid(self) -> int:
        return self.manager.provisioner.pid

    def drain_iopub(self) -> None:
        """Move every iopub message waiting now into ``self.iopub`` (so the socket never fills up)."""
        while True:
            try:
                self.iopub.append(self.client.get_iopub_msg(timeout=0))
            except queue.Empty:
                return

    def _reply(self, msg_id: str, deadline: float) -> dict[str, Any]:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KernelError(f"no execute_reply for {msg_id} in time")
            try:
                reply = self.client.get_shell_msg(timeout=min(remaining, 1.0))
            except queue.Empty:
                self.drain_iopub()
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply

    def run(self, code: str, timeout: float = CELL_TIMEOUT) -> None:
        """Run ``code`` and wait for its reply; a failed cell raises KernelError with the error."""
        self._check(self._execute(code, {}, timeout), code)

    def value(self, expression: str, timeout: float = CELL_TIMEOUT) -> Any:
        """``expression`` evaluated in the kernel (a user expression of an empty cell), read back
        from its repr as a Python literal (plain data only)."""
        reply = self._check(self._execute("", {"value": expression}, timeout), expression)
        result = reply["content"]["user_expressions"]["value"]
        if result.get("status") != "ok":
            raise KernelError(f"{expression!r} failed: {result.get('ename')}: {result.get('evalue')}")
        return ast.literal_eval(result["data"]["text/plain"])

    def _execute(self, code: str, expressions: dict[str, str], timeout: float) -> dict[str, Any]:
        msg_id = self.client.execute(code, store_history=False, user_expressions=expressions)
        reply = self._reply(msg_id, time.monotonic() + timeout)
        self.drain_iopub()
        return reply

    @staticmethod
    def _check(reply: dict[str, Any], code: str) -> dict[str, Any]:
        content = reply["content"]
        if content["status"] != "ok":
            trace = "\n".join(content.get("traceback", []))
            raise KernelError(f"cell failed: {code!r}\n{content.get('ename')}: {content.get('evalue')}\n{trace}")
        return reply

    def latencies(self, count: int, *, gap: float = 0.02, code: str = "1+1") -> list[float]:
        """Seconds from sending ``code`` to its ``execute_reply``, ``count`` times, ``gap`` apart.

        The gap varies (0.5 to 1.5 times ``gap``) so that the cells land at every phase of whatever
        runs in the background. iopub is drained between cells (not timed).
        """
        times = []
        for k in range(count):
            self.drain_iopub()
            began = time.perf_counter()
            msg_id = self.client.execute(code, store_history=False)
            self._reply(msg_id, time.monotonic() + CELL_TIMEOUT)
            times.append(time.perf_counter() - began)
            time.sleep(gap * (0.5 + (k * 0.618034) % 1.0))
        self.drain_iopub()
        return times


def median_p99(times: list[float]) -> tuple[float, float]:
    """Median and 99th percentile (nearest rank) of ``times``."""
    ordered = sorted(times)
    rank = min(len(ordered) - 1, max(0, math.ceil(0.99 * len(ordered)) - 1))
    return statistics.median(ordered), ordered[rank]


@contextlib.contextmanager
def running_kernel(**env: str) -> Iterator[BenchKernel]:
    """A python3 kernel running this checkout, in a temporary home; always shut down."""
    from jupyter_client import KernelManager

    with tempfile.TemporaryDirectory(prefix="mtj-bench-") as home:
        kernel_env = dict(os.environ)
        kernel_env.update(
            {
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                "JUPYTER_CONFIG_DIR": str(Path(home) / "jupyter-config"),
                "IPYTHONDIR": str(Path(home) / "ipython"),
                "MTJ_INDEX": str(Path(home) / "tasks.sqlite3"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        kernel_env.pop("MTJ_CONFIG", None)
        kernel_env.update(env)
        manager = KernelManager(kernel_name="python3")
        manager.shutdown_wait_time = 5.0
        manager.start_kernel(cwd=home, env=kernel_env)
        kernel: BenchKernel | None = None
        try:
            kernel = BenchKernel(manager)
            yield kernel
        finally:
            if kernel is not None:
                kernel.client.stop_channels()
            with contextlib.suppress(Exception):
                manager.shutdown_kernel(now=False)
            if manager.has_kernel:
                manager.shutdown_kernel(now=True)
