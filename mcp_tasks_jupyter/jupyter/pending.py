"""What an awaiting magic returns, and the helper that transformed cells await it with.

A magic cannot be awaited, so ``%mcp_task`` & co. start their work as a runtime job and return a
:class:`Pending`. The input transformer (``transform.py``) rewrites the cell so that it awaits
``_mtj_await(<the magic call>)``: the cell then waits for the work (the loop stays free) and gets
the magic's real value. Where the cell is not rewritten (inside a function, under another cell
magic), the magic's value is the Pending itself: ``await`` it.

Failures reach the cell as one line, prefixed with what the magic was doing ("demo:slow_compute: ..."):
an MCPError becomes IPython's UsageError (shown without a traceback), except a task that ended without a
result, whose own error (``TaskFailed``, ``TaskCancelled``, ...) is raised and shown as one line.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from IPython.core.error import UsageError

from ..errors import MCPError, ServerExited, TaskError, TaskFailed, TaskNotFound

#: The name transformed cells call; kept in the user namespace (hidden from %who).
HELPER_NAME = "_mtj_await"


class Pending:
    """The value of an awaiting magic until the cell awaits it; ``await`` it for the real value.

    ``job`` is a runtime-owned task (an interrupted cell never cancels it); ``then`` runs in the
    awaiting cell afterwards (showing a widget, waiting for a result). ``quiet`` values are not
    shown again when the magic is a statement of its own (the magic has displayed them already).
    """

    def __init__(
        self,
        what: str,
        job: asyncio.Future[Any],
        then: Callable[[Any], Awaitable[Any]] | None = None,
        *,
        quiet: bool = False,
        redact: Callable[[str], str] = str,
        starts_task: str | None = None,
    ) -> None:
        self.what = what
        self.quiet = quiet
        #: The task the job creates (``%mcp_task``), as a line names it: interrupted before the server
        #: has it, the cell says so.
        self.starts_task = starts_task
        self._job = job
        self._then = then
        self._redact = redact
        #: Set by the cell rewrite when the cell starts many tasks (a loop, several magics): the
        #: magic then shows its task compact.
        self.many = False

    def __await__(self) -> Generator[Any, None, Any]:
        return self._settle().__await__()

    async def _settle(self) -> Any:
        try:
            value = await asyncio.shield(self._job)
            if self._then is not None:
                value = await self._then(value)
            return value
        except TaskError as exc:
            if type(exc) is TaskNotFound:  # a task id nobody knows (``%mcp_result``): the user's to fix
                raise UsageError(self._redact(one_line(self.what, exc))) from None
            # The task ended without a result: no usage error. The error itself reaches the cell (so
            # ``except mtj.TaskFailed`` works), shown as one line by the shell's handler (interrupts.py).
            raise shown_as_one_line(exc, self._redact(task_error_line(self.what, exc))) from None
        except MCPError as exc:
            raise UsageError(self._redact(one_line(self.what, exc))) from None

    def started(self) -> Any:
        """The job's value once it has one (e.g. the TaskHandle a ``--wait`` magic then waits
        for), else None."""
        job = self._job
        if job.done() and not job.cancelled() and job.exception() is None:
            return job.result()
        return None

    def starting(self) -> bool:
        """Whether the job (a task's creation) is still going on."""
        return not self._job.done()

    def when_started(self, use: Callable[[Any], None]) -> None:
        """Call ``use`` with the job's value once it has one (never if it fails or is cancelled)."""

        def done(job: asyncio.Future[Any]) -> None:
            if not job.cancelled() and job.exception() is None:
                use(job.result())

        self._job.add_done_callback(done)

    def __repr__(self) -> str:
        state = "done" if self._job.done() else "running"
        return f"<pending {self.what} ({state}): await it for its value>"


async def settle(value: Any, bare: bool = False, target: str | None = None, many: bool = False) -> Any:
    """What transformed cells await: a Pending's value (None for a quiet one used as a statement).

    When the cell is interrupted while the magic waits for a task it has started (``--wait``),
    the task runs on: its handle is bound to ``target`` (the variable the cell assigns to) and
    :class:`~.interrupts.StillRunning` ends the cell with one line instead of a traceback.
    """
    if not isinstance(value, Pending):
        return value
    value.many = value.many or many
    try:
        result = await value
    except (asyncio.CancelledError, KeyboardInterrupt):
        from ..tasks.handle import TaskHandle
        from .interrupts import StillRunning, StillStarting

        if value.starts_task and value.starting():  # interrupted while the task is created: it is, all the same
            if target is not None:
                value.when_started(lambda started: _bind(target, started))
            raise StillStarting(value.starts_task, target) from None
        handle = value.started()
        if not isinstance(handle, TaskHandle) or handle.done():
            raise
        if target is not None:
            _bind(target, handle)
        raise StillRunning(handle, target) from None
    return None if bare and value.quiet else result


def _bind(name: str, value: Any) -> None:
    """``name = value`` in the user's namespace (the cell that would have bound it was interrupted)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.user_ns[name] = value


#: Task errors a magic raised, with the one line the shell shows for each instead of a traceback.
ONE_LINE: weakref.WeakKeyDictionary[BaseException, str] = weakref.WeakKeyDictionary()


def shown_as_one_line(exc: TaskError, line: str) -> TaskError:
    """``exc``, marked to be shown as ``line`` (by the shell's handler in interrupts.py)."""
    ONE_LINE[exc] = line
    return exc


def task_error_line(what: str, exc: TaskError) -> str:
    """``TaskFailed: demo:failing_job (task 5f1c…): upstream said no (JSON-RPC error -32603)``: the
    magic's call named once, what the server said, and its JSON-RPC code where it sent one."""
    task = f" (task {exc.task_id})" if exc.task_id else ""
    lines = [line.strip() for line in exc.reason.splitlines() if line.strip()]
    line = f"{type(exc).__name__}: {what}{task}: {lines[0] if lines else 'ended without a result'}"
    code = exc.error.get("code") if isinstance(exc, TaskFailed) and isinstance(exc.error, dict) else None
    if isinstance(code, int) and not isinstance(code, bool):
        line += f" (JSON-RPC error {code})"
    return line


def one_line(what: str, exc: BaseException) -> str:
    """``what: problem`` on one line (a stdio server's last stderr line added when it exited)."""
    detail = exc.detail if isinstance(exc, MCPError) else str(exc)
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    if isinstance(exc, ServerExited) and exc.stderr.strip():
        text += f" (server stderr: {exc.stderr.strip().splitlines()[-1].strip()})"
    return f"{what}: {text}" if what else text


__all__ = ["HELPER_NAME", "ONE_LINE", "Pending", "one_line", "settle", "shown_as_one_line", "task_error_line"]
