"""The one long-lived owner of connections and background jobs in a kernel (or any asyncio program)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Coroutine

from ..client import Client
from ..tasks import TaskHandle

log = logging.getLogger(__name__)


class Runtime:
    """Holds every connection (by name), every task handle started here, and every background job.

    Strong references keep jobs alive between cells; nothing a user started is dropped silently.
    """

    def __init__(self) -> None:
        self.clients: dict[str, Client] = {}
        #: Every task started or attached in this kernel, oldest first (finished ones too).
        self.handles: list[TaskHandle] = []
        self._jobs: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` in the background on the running loop, owned by the runtime."""
        job = asyncio.get_running_loop().create_task(coro, name=name)
        self._jobs.add(job)
        job.add_done_callback(self._job_done)
        return job

    def _job_done(self, job: asyncio.Task[Any]) -> None:
        self._jobs.discard(job)
        if not job.cancelled() and job.exception() is not None:
            log.error("background job %s failed: %s", job.get_name(), job.exception())

    def track(self, handle: TaskHandle) -> TaskHandle:
        if handle not in self.handles:
            self.handles.append(handle)
        return handle


_runtime: Runtime | None = None


def get_runtime() -> Runtime:
    """The process-wide runtime (created on first use)."""
    global _runtime
    if _runtime is None:
        _runtime = Runtime()
    return _runtime
