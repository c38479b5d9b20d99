"""Interrupting a cell that waits for a task: one line, the task runs on, the handle stays bound.

A cell waiting for a task (``r = %mcp_task --wait ...``, ``await h``, ``await asyncio.gather(*hs)``)
that is interrupted gets ``CancelledError`` (ipykernel cancels the cell's coroutine) or
``KeyboardInterrupt``. The task itself is never cancelled (handles and magics shield it), so a
traceback would only frighten. Instead the cell ends with one line::

    still running in the background: r = demo:slow_compute seconds=2 (task 5f1c…); `await r` for its
    result, `%mcp_cancel r` to stop it                                      (one line, cut here)

The tasks named are the unfinished ones the cell refers to by name (a handle, or a list of them)
and the one a ``--wait`` magic was waiting for (:class:`StillRunning`, raised by
``pending.settle``, which first binds the handle to the cell's variable). An interrupt that has
nothing to do with a task keeps IPython's usual traceback.

A task that a magic waited for and that ended without a result (``TaskFailed``, ``TaskCancelled``, ...)
ends the cell the same way: its own error (so ``except mtj.TaskFailed`` catches it), shown as one line
(``pending.task_error_line``) rather than a traceback through the library.
"""

from __future__ import annotations

import asyncio
import linecache
import re
import sys
import weakref
from collections.abc import Sequence
from typing import Any

from ..errors import TaskError
from ..tasks.handle import TaskHandle
from ..views.labels import task_label
from .pending import ONE_LINE

#: Tasks named in the line, at most (the rest are counted).
NAMED = 3
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class StillRunning(Exception):
    """A cell waiting for ``handle`` (bound to ``name``, if any) was interrupted; the task runs on."""

    def __init__(self, handle: TaskHandle, name: str | None = None) -> None:
        super().__init__(still_running_line([(name, handle)]))
        self.handle = handle
        self.name = name


class StillStarting(Exception):
    """A cell was interrupted while its magic was still creating a task (``what``); the creation goes
    on, and ``name`` (if any) is bound to the task's handle once the server has it."""

    def __init__(self, what: str, name: str | None = None) -> None:
        then = f"`{name}` is bound to it once the server has it" if name else "`%mcp_tasks` lists it then"
        super().__init__(f"still being started in the background: {what}; {then}")


Entry = tuple[str | None, TaskHandle | Sequence[TaskHandle]]


def still_running_line(entries: Sequence[Entry]) -> str:
    """``still running in the background: ...``, one line for the tasks of ``entries``."""
    parts = []
    for name, what in entries[:NAMED]:
        if isinstance(what, TaskHandle):
            task = f"{what.server}:{task_label(what.tool, what.arguments)}"
            if what.task_id:
                task += f" (task {_short(what.task_id)})"
        else:
            running = [h for h in what if not h.done()]
            task = f"{len(running)} of {len(what)} tasks"
        parts.append(f"{name} = {task}" if name else task)
    if len(entries) > NAMED:
        parts.append(f"and {len(entries) - NAMED} more")
    line = "still running in the background: " + ", ".join(parts)
    first_name, first = entries[0]
    if first_name:
        line += f"; `await {first_name}` for its result, `%mcp_cancel {first_name}` to stop it"
    elif isinstance(first, TaskHandle) and first.task_id:
        ref = f"{first.server}:{first.task_id}"
        line += f"; `%mcp_result {ref}` waits for it again, `%mcp_cancel {ref}` stops it"
    return line


def _short(task_id: str) -> str:
    return task_id if len(task_id) <= 12 else task_id[:8] + "…"


def waited_on(namespace: dict[str, Any], source: str) -> list[Entry]:
    """The unfinished tasks ``source`` names: variables of ``namespace`` holding a running handle
    or a list/tuple of handles of which one still runs, in the order the source names them."""
    found: list[Entry] = []
    seen: set[str] = set()
    for name in _NAME.findall(source):
        if name in seen or name not in namespace:
            continue
        seen.add(name)
        value = namespace[name]
        if isinstance(value, TaskHandle):
            if not value.done():
                found.append((name, value))
        elif (
            isinstance(value, (list, tuple))
            and value
            and all(isinstance(v, TaskHandle) for v in value)
            and any(not v.done() for v in value)
        ):
            found.append((name, list(value)))
    return found


def _cell_source(shell: Any, tb: Any) -> str:
    """The source of the interrupted cell: the frames of ``tb`` that run in the user's namespace."""
    lines: list[str] = []
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_globals is shell.user_ns:
            lines.extend(linecache.getlines(frame.f_code.co_filename))
        tb = tb.tb_next
    return "".join(lines)


class InterruptHandler:
    """IPython's custom exception handler for interrupts (``shell.set_custom_exc``); an earlier
    custom handler keeps the exceptions it had."""

    TYPES: tuple[type[BaseException], ...] = (
        asyncio.CancelledError,
        KeyboardInterrupt,
        StillRunning,
        StillStarting,
        TaskError,
    )

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.previous_types: tuple[type[BaseException], ...] = tuple(
            t for t in getattr(shell, "custom_exceptions", ()) if t not in self.TYPES
        )
        self.previous = getattr(shell, "CustomTB", None) if self.previous_types else None

    def __call__(self, shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> Any:
        if self.previous is not None and not issubclass(etype, self.TYPES):
            return self.previous(etype, value, tb, tb_offset=tb_offset)
        if isinstance(value, TaskError):
            line = ONE_LINE.get(value)
            if line is None:  # raised by the cell's own code: its traceback is the cell's business
                shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
                return None
            return _one_line(value, line, sys.stderr)
        if isinstance(value, StillStarting):
            return _one_line(value, str(value), sys.stdout)
        if isinstance(value, StillRunning):
            entries: list[Entry] = [(value.name, value.handle)]
        else:
            entries = waited_on(shell.user_ns, _cell_source(shell, tb))
        if not entries:
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
            return None
        return _one_line(value, still_running_line(entries), sys.stdout)


def _one_line(value: BaseException, line: str, out: Any) -> list[str]:
    """Show ``line`` instead of ``value``'s traceback, and let IPython keep that line as the traceback it
    stores for the cell (``_render_traceback_``). Without it, IPython 9 formats the whole traceback for its
    history after the handler ran: the first time in a kernel that compiles pygments' lexers, seconds on a
    busy machine, during which the interrupted cell has not ended and a second interrupt is lost."""
    print(line, file=out)
    try:
        value._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]
    except AttributeError:  # an exception type without a __dict__
        pass
    return []


#: The handler installed in each shell (weakly: a shell that goes away takes its entry with it).
_installed: weakref.WeakKeyDictionary[Any, InterruptHandler] = weakref.WeakKeyDictionary()


def install(shell: Any) -> None:
    """Let interrupted cells that wait for tasks end with one line (once per shell)."""
    if shell in _installed:
        return
    handler = _installed[shell] = InterruptHandler(shell)
    shell.set_custom_exc(handler.TYPES + handler.previous_types, handler)


def uninstall(shell: Any) -> None:
    """Give IPython back its own handling of interrupts."""
    handler = _installed.pop(shell, None)
    if handler is not None:
        if handler.previous is not None:
            shell.CustomTB, shell.custom_exceptions = handler.previous, handler.previous_types
        else:
            shell.set_custom_exc((), None)


__all__ = ["StillRunning", "StillStarting", "install", "still_running_line", "uninstall", "waited_on"]
