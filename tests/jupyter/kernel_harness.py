"""Drive a real IPython kernel (jupyter_client) from tests: run cells, read their outputs, interrupt.

Every wait has a deadline, and :func:`running_kernel` always shuts the kernel down.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client import KernelManager

from tests.support import REPO_ROOT
from tests.support.processes import python_env

CELL_TIMEOUT = 30.0  # seconds: a bound on every cell, never a speed claim


@dataclass
class CellRun:
    """What one cell sent back: its iopub messages (type, content) and the shell reply's status."""

    code: str
    status: str = ""
    reply: dict[str, Any] = field(default_factory=dict)
    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    elapsed: float = 0.0

    def stream(self, name: str) -> str:
        return "".join(c["text"] for t, c in self.messages if t == "stream" and c.get("name") == name)

    @property
    def stdout(self) -> str:
        return self.stream("stdout")

    @property
    def stderr(self) -> str:
        return self.stream("stderr")

    @property
    def result(self) -> str:
        """The text/plain of the cell's execute_result ('' when there is none)."""
        for kind, content in self.messages:
            if kind == "execute_result":
                return content["data"].get("text/plain", "")
        return ""

    def displays(self, mime: str = "text/plain") -> list[str]:
        """The ``mime`` parts of every display_data, in order."""
        return [c["data"][mime] for t, c in self.messages if t == "display_data" and mime in c["data"]]

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The ``error`` outputs (an exception with its traceback)."""
        return [c for t, c in self.messages if t == "error"]

    def check(self) -> CellRun:
        """Raise with everything the cell printed unless it succeeded."""
        if self.status != "ok":
            tb = "\n".join("\n".join(e.get("traceback", [])) for e in self.errors)
            raise AssertionError(
                f"cell failed ({self.status}): {self.code!r}\nstderr: {self.stderr}\n"
                f"reply: {self.reply.get('ename')}: {self.reply.get('evalue')}\n{tb}"
            )
        return self

    def __str__(self) -> str:
        return (
            f"{self.code!r} -> {self.status}; stdout={self.stdout!r}; stderr={self.stderr!r}; "
            f"result={self.result!r}"
        )


class Kernel:
    """A started kernel and a blocking client on it."""

    def __init__(self, manager: KernelManager) -> None:
        self.manager = manager
        #: Whatever a fixture wants to hand to its tests (e.g. the output of a set-up cell).
        self.notes: dict[str, Any] = {}
        self.client = manager.client()
        #: iopub messages read ahead by :meth:`wait_for_stream`, for :meth:`collect` to take first.
        self._read_ahead: list[dict[str, Any]] = []
        self.client.start_channels()
        self.client.wait_for_ready(timeout=CELL_TIMEOUT)

    @property
    def pid(self) -> int:
        return self.manager.provisioner.pid  # type: ignore[union-attr]

    def run(self, code: str, timeout: float = CELL_TIMEOUT, *, ok: bool = True) -> CellRun:
        """Run ``code`` and wait for it; with ``ok`` the cell must succeed."""
        run = self.collect(self.submit(code), code, timeout)
        return run.check() if ok else run

    def submit(self, code: str) -> str:
        """Send ``code`` without waiting; returns the request's msg_id for :meth:`collect`."""
        self._started = time.monotonic()
        return self.client.execute(code)

    def collect(self, msg_id: str, code: str = "", timeout: float = CELL_TIMEOUT) -> CellRun:
        """Read the outputs of request ``msg_id`` until the kernel is idle again, then its reply."""
        run = CellRun(code)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"cell did not finish within {timeout:g} s: {code!r}\nso far: {run.messages}")
            if self._read_ahead:
                message = self._read_ahead.pop(0)
            else:
                try:
                    message = self.client.get_iopub_msg(timeout=remaining)
                except queue.Empty:
                    continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "status":
                if content["execution_state"] == "idle":
                    break
                continue
            if kind != "execute_input":
                run.messages.append((kind, content))
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no execute_reply within {timeout:g} s: {code!r}")
            reply = self.client.get_shell_msg(timeout=remaining)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        run.reply = reply["content"]
        run.status = run.reply["status"]
        run.elapsed = time.monotonic() - self._started
        return run

    def wait_for_stream(self, msg_id: str, text: str, timeout: float = CELL_TIMEOUT) -> None:
        """Wait until request ``msg_id`` wrote ``text`` to stdout or stderr (the cell reached a point:
        the event, not a guess of how long it takes). What is read meanwhile stays for :meth:`collect`."""
        self.wait_for(msg_id, "stream", text, timeout)

    def wait_for(self, msg_id: str, kind: str, text: str = "", timeout: float = CELL_TIMEOUT) -> None:
        """Wait until request ``msg_id`` sent an iopub message of ``kind`` (``display_data``, ``stream``)
        whose text holds ``text``. What is read meanwhile stays for :meth:`collect`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"request {msg_id} sent no {kind} with {text!r} within {timeout:g} s")
            try:
                message = self.client.get_iopub_msg(timeout=remaining)
            except queue.Empty:
                continue
            self._read_ahead.append(message)
            if (
                message["parent_header"].get("msg_id") == msg_id
                and message["msg_type"] == kind
                and text in str(message["content"].get("text", message["content"].get("data", "")))
            ):
                return

    def value(self, expression: str, timeout: float = CELL_TIMEOUT) -> Any:
        """``eval`` of ``repr(expression)`` in the kernel (for plain data: str, int, list, dict, ...)."""
        import ast

        return ast.literal_eval(self.run(f"print(repr({expression}))", timeout).stdout.strip())

    def interrupt(self) -> None:
        self.manager.interrupt_kernel()


class Notebook:
    """A kernel whose iopub messages are all kept, whatever cell they belong to (background jobs
    keep the parent of the cell that started them), and a way to talk over comms as a browser does."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.iopub: list[dict[str, Any]] = []

    def run(self, code: str, timeout: float = CELL_TIMEOUT, *, cell_id: str | None = None) -> str:
        """Run a cell (as JupyterLab sends it with ``cell_id``); its msg_id once it is done (it must succeed)."""
        client = self.kernel.client
        if cell_id is None:
            msg_id = client.execute(code)
        else:
            request = client.session.msg(
                "execute_request",
                {
                    "code": code,
                    "silent": False,
                    "store_history": True,
                    "user_expressions": {},
                    "allow_stdin": False,
                    "stop_on_error": True,
                },
                metadata={"cellId": cell_id},
            )
            client.shell_channel.send(request)
            msg_id = request["header"]["msg_id"]
        self.wait(
            lambda m: (
                m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
                and m["parent_header"].get("msg_id") == msg_id
            ),
            timeout,
            f"the cell {code!r}",
        )
        deadline = time.monotonic() + timeout
        while True:
            reply = client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        errors = [m for m in self.of(msg_id) if m["msg_type"] == "error"]
        assert reply["content"]["status"] == "ok", f"{code!r} failed: {errors or reply['content']}"
        return msg_id

    def wait(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        timeout: float = CELL_TIMEOUT,
        what: str = "a message",
        *,
        since: int = 0,
    ) -> dict[str, Any]:
        """The first iopub message from number ``since`` on (kept or new) that fits ``predicate``."""
        for message in self.iopub[since:]:
            if predicate(message):
                return message
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{what}: not seen within {timeout:g} s")
            try:
                message = self.kernel.client.get_iopub_msg(timeout=remaining)
            except queue.Empty:
                continue
            self.iopub.append(message)
            if predicate(message):
                return message

    def of(self, msg_id: str) -> list[dict[str, Any]]:
        return [m for m in self.iopub if m["parent_header"].get("msg_id") == msg_id]

    def stdout(self, msg_id: str) -> str:
        return "".join(m["content"]["text"] for m in self.of(msg_id) if m["msg_type"] == "stream")

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> None:
        """Send a shell message as the browser does (``comm_open``, ``comm_msg``, ``comm_close``)."""
        client = self.kernel.client
        client.shell_channel.send(client.session.msg(msg_type, content))

    def send_custom(self, comm_id: str, content: dict[str, Any]) -> None:
        """What the browser's widget manager sends for ``model.send(content)``."""
        self.send_shell("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})


def kernel_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment for a test kernel: this checkout importable, config dirs of its own."""
    env = python_env()
    env["JUPYTER_CONFIG_DIR"] = str(home / "jupyter-config")
    env["IPYTHONDIR"] = str(home / "ipython")
    env.pop("MTJ_CONFIG", None)
    env.pop("JPY_SESSION_NAME", None)
    env["MTJ_INDEX"] = str(home / "tasks.sqlite3")  # never the user's own task index
    env["MTJ_TOKENS"] = str(home / "tokens")  # nor the user's sign-ins
    env.update(extra)
    return env


@contextlib.contextmanager
def running_kernel(home: Path, *, cwd: Path | None = None, **env: str) -> Iterator[Kernel]:
    """A python3 kernel running in ``cwd`` (default ``home``) with :func:`kernel_env`; always shut down."""
    manager = KernelManager(kernel_name="python3")
    manager.shutdown_wait_time = 5.0
    manager.start_kernel(cwd=str(cwd or home), env=kernel_env(home, **env))
    kernel: Kernel | None = None
    try:
        kernel = Kernel(manager)
        yield kernel
    finally:
        if kernel is not None:
            kernel.client.stop_channels()
        with contextlib.suppress(Exception):
            manager.shutdown_kernel(now=False)
        if manager.has_kernel:
            manager.shutdown_kernel(now=True)


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting to be reaped counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.05)
    return process_gone(pid)


def kill_if_alive(pid: int) -> None:
    """Last-resort cleanup for a process a test expected to be gone."""
    if not process_gone(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


DEMO_COMMAND = "{sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 100"

__all__ = [
    "CELL_TIMEOUT",
    "DEMO_COMMAND",
    "REPO_ROOT",
    "CellRun",
    "Kernel",
    "Notebook",
    "kernel_env",
    "kill_if_alive",
    "process_gone",
    "running_kernel",
    "wait_gone",
]
