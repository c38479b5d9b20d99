"""Owned background work: every fire-and-forget asyncio task has an owner that keeps it alive.

asyncio keeps only weak references to tasks: a task nobody references can be garbage-collected
while it waits ("Task was destroyed but it is pending!"). A ``Background`` holds each task it starts
until the task ends, logs its failure (never raises it), and cancels what is left when closed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """The background tasks of one owner (``owner`` names it in log records)."""

    __slots__ = ("_tasks", "owner")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` in the background; kept alive until it ends; a failure is logged."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning(
                "%s: background task %s failed: %s: %s", self.owner, task.get_name(), type(exc).__name__, exc
            )

    def __len__(self) -> int:
        return len(self._tasks)

    async def aclose(self) -> None:
        """Cancel what is still running and wait for it to end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
