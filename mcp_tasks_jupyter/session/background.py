"""The one owner of background work: every asyncio task the client starts is started here.

Each connection owns one ``Background`` (its session's, ``Session.background``): the session's own
jobs (renewal, reconnection, serving the server's requests), and, in child groups of it, the
transport's (stream readers, the listener, a stdio server's pipes), sign-in's (refreshing a token
ahead), the dialect's (a subscription, a result fetched beside a poll) and every task's poller. The
runtime of a kernel owns the connections, and its own jobs (the magics' work) in a group of its own.

anyio's shape, on plain asyncio: a group holds each task it starts until the task ends (asyncio keeps
only weak references: a task nobody holds can be collected while it waits, "Task was destroyed but it
is pending!"); a failure is reported (logged with the group's name and the job's), never lost and
never raised into the code that started it; closing a group cancels what is left in it and in its
children and waits for them. A child group closes on its own (a transport closing its streams) or with
its parent (the connection closing). ``tests/test_background_owner.py`` checks that nothing else in the
package calls ``create_task`` or ``ensure_future`` (the demo server, a program of its own, aside).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """The background jobs of one owner (``owner`` names it in log records), and its child groups."""

    __slots__ = ("_children", "_tasks", "owner")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._tasks: set[asyncio.Task[Any]] = set()
        self._children: list[Background] = []

    def child(self, owner: str) -> Background:
        """A group of its own inside this one: closed by its own ``aclose`` or with this group (a
        component makes its group once, so the list stays as short as the connection's parts)."""
        group = Background(owner)
        self._children.append(group)
        return group

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` in the background; kept alive until it ends; a failure is logged."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def future(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` beside the code that starts it, which awaits or cancels the task itself (a
        request raced against another); held here so that closing the connection ends it too. Its
        failure belongs to whoever awaits it: it is not logged."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning(
                "%s: background task %s failed: %s: %s", self.owner, task.get_name(), type(exc).__name__, exc
            )

    def __len__(self) -> int:
        return len(self._tasks) + sum(len(child) for child in self._children)

    async def aclose(self) -> None:
        """Cancel what is still running here and in the child groups, and wait for it to end."""
        for child in list(self._children):
            await child.aclose()
        current = asyncio.current_task()
        tasks = [task for task in self._tasks if task is not current]  # a job may close its own group
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
