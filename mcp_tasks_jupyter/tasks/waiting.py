"""Waiting for many tasks: ``gather`` (results in order) and ``as_completed`` (handles as they end).

The names and the behaviour are asyncio's (``asyncio.gather``, ``asyncio.as_completed``), for task
handles: a wait never cancels a task. Cancelling the code that waits, or a ``timeout`` running out,
leaves every task running on its server; ``await handle.cancel()`` (or ``batch.cancel()``) ends one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

from ..errors import UsageError
from .handle import TaskHandle
from .results import ToolResult


async def gather(*handles: TaskHandle, return_exceptions: bool = False, timeout: float | None = None) -> list[Any]:
    """The ToolResults of ``handles``, in the order given, once every one has ended.

    A task that failed (TaskFailed, TaskCancelled, TaskLost, ...) raises its error as soon as it
    ends, unless ``return_exceptions``: then its error takes its place in the list. A result with
    ``is_error`` is a result, as ``await handle`` returns it. After ``timeout`` seconds, TimeoutError;
    the tasks go on either way.
    """
    handles = _checked(handles, "gather")
    async for handle in as_completed(handles, timeout=timeout):
        error = handle.exception()
        if error is not None and not return_exceptions:
            raise error
    return [_outcome(handle) for handle in handles]


async def as_completed(
    handles: Iterable[TaskHandle], *, timeout: float | None = None
) -> AsyncIterator[TaskHandle]:
    """``async for handle in as_completed(handles)``: each handle once, as soon as it has ended
    (those already ended first, in the order given). After ``timeout`` seconds without every one
    ending, TimeoutError; the tasks go on."""
    given = _checked(tuple(handles), "as_completed")
    unique = list(dict.fromkeys(given))  # a handle given twice is yielded once
    ended: asyncio.Queue[TaskHandle] = asyncio.Queue()
    removers = [handle.add_done_callback(ended.put_nowait) for handle in unique if not handle.done()]
    try:
        for handle in unique:
            if handle.done():
                yield handle
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        for _ in removers:
            # The deadline bounds each wait here, never the caller's own work between two handles.
            remaining = None if deadline is None else max(0.0, deadline - loop.time())
            yield await asyncio.wait_for(ended.get(), remaining)
    finally:
        for remove in removers:
            remove()


def _outcome(handle: TaskHandle) -> ToolResult | BaseException:
    error = handle.exception()
    return error if error is not None else handle.result()


def _checked(handles: tuple[Any, ...], what: str) -> tuple[TaskHandle, ...]:
    for value in handles:
        if not isinstance(value, TaskHandle):
            raise UsageError(
                f"{what} takes task handles (from start_task or map), not {type(value).__name__}"
                + (
                    ": unpack a list with *handles"
                    if isinstance(value, (list, tuple)) and what == "gather"
                    else ""
                )
            )
    return handles


__all__ = ["as_completed", "gather"]
