"""Fan-out: one tool over many argument mappings, at most ``limit`` tasks running at once.

``client.map`` returns a :class:`Batch` at once: one handle per mapping, in order. The first
``limit`` are sent to the server straight away; the others wait with status ``queued`` and each is
sent as soon as another task of the batch ends (in the order given). A queued task is never sent
once it was cancelled, and never forgotten: closing the client ends it ``lost``.

A batch is a sequence of handles and waits like one (``gather``, ``as_completed``, ``wait``,
``ready``); its one view (``view()``, ``BatchView``) is what the grouped widget and the text repr show.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from ..errors import MCPError, TaskCancelled, TaskLost
from ..protocol.task_state import CANCELLED
from ..tasks.handle import TaskHandle
from ..tasks.results import ToolResult
from ..tasks.status import FAILURES, QUEUED, STATUSES
from ..tasks.waiting import as_completed, gather
from ..views.labels import arguments_label
from ..views.view import failure_message

if TYPE_CHECKING:
    from ..protocol.types import Tool
    from .lifecycle import TaskLifecycle

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 8
#: Tasks listed by name in a batch's view: the failed ones, and the slowest ones.
FAILED_SHOWN = 20
SLOWEST_SHOWN = 5
#: Characters of a task's label (its arguments as ``key=value``) in a batch's view.
LABEL_CHARS = 80

#: The batch each queued handle of a ``client.map`` call belongs to (the front end counts a batch's
#: tasks together); weak, so a handle's entry goes with it.
_BATCH_OF: weakref.WeakKeyDictionary[TaskHandle, str] = weakref.WeakKeyDictionary()


def batch_of(handle: TaskHandle) -> str | None:
    """The id of the ``client.map`` batch ``handle`` was started by, or None."""
    return _BATCH_OF.get(handle)


@dataclass(frozen=True, slots=True)
class BatchTask:
    """One task of a batch as its view lists it (``index`` is its place in the batch)."""

    index: int
    label: str
    status: str
    started: float
    finished: float | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BatchView:
    """What a batch looks like now: counts by status, the aggregate progress (0..1: an ended task
    counts whole, a running one by its own progress where it reports a total), the clock, and the
    failed and the slowest tasks. Times are epoch seconds; ``eta`` is seconds (None: unknown)."""

    tool: str
    server: str
    total: int
    limit: int
    counts: dict[str, int]
    ended: int
    fraction: float
    started: float
    finished: float | None
    eta: float | None
    failed: tuple[BatchTask, ...]
    slowest: tuple[BatchTask, ...]

    @property
    def done(self) -> bool:
        return self.ended == self.total

    def counts_text(self) -> str:
        """``42 completed, 3 failed, 5 queued`` (in the vocabulary's order)."""
        return ", ".join(f"{n} {status}" for status, n in self.counts.items()) or "no tasks"


class Batch(Sequence[TaskHandle]):
    """The tasks of one ``client.map`` call: a sequence of handles, in the order of the argument
    mappings, that waits like one handle.

    ``await batch.gather()`` (or ``mtj.gather(*batch)``) gives the results in order;
    ``async for handle in batch.as_completed()`` the handles as they end; ``await batch.wait(timeout)``
    the results, or TimeoutError without cancelling anything; ``batch.ready()`` whether all ended;
    ``await batch.cancel()`` cancels all (the queued ones are never sent).
    """

    def __init__(
        self,
        lifecycle: TaskLifecycle,
        spec: Tool,
        arguments: Sequence[dict[str, Any]],
        *,
        limit: int,
        ttl: int | None,
        answers: Sequence[dict[str, Any] | None],
        cached: Callable[[dict[str, Any]], TaskHandle | None] | None = None,
    ) -> None:
        self._lifecycle = lifecycle
        self._spec = spec
        self.limit = limit
        self._ttl = ttl
        self.tool = spec.name
        self.server = lifecycle.server
        self.started = time.time()
        self._queue: collections.deque[TaskHandle] = collections.deque()
        self._sent: set[TaskHandle] = set()  # sent and not ended: what counts against the limit
        self._starting: dict[TaskHandle, asyncio.Task[None]] = {}
        self._plan: dict[TaskHandle, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._callbacks: list[Callable[[Batch], None]] = []
        self._on_end: list[Callable[[Batch], None]] = []
        self._ended = 0
        self._closed: str | None = None
        self.id = uuid.uuid4().hex[:12]
        handles: list[TaskHandle] = []
        for args, preset in zip(arguments, answers, strict=True):
            hit = cached(args) if cached is not None else None
            if hit is not None:
                handles.append(hit)
                continue
            handle = lifecycle.queued(spec, args, cancel=self._cancel_one)
            _BATCH_OF[handle] = self.id
            self._plan[handle] = (args, preset)
            self._queue.append(handle)
            handles.append(handle)
        self._handles = handles
        for handle in handles:
            handle.on_change(self._relay)
            handle.add_done_callback(self._task_ended)
        self._fill()

    # -- a sequence of handles -------------------------------------------------------------------

    @overload
    def __getitem__(self, index: int) -> TaskHandle: ...
    @overload
    def __getitem__(self, index: slice) -> list[TaskHandle]: ...
    def __getitem__(self, index: int | slice) -> TaskHandle | list[TaskHandle]:
        return self._handles[index]

    def __len__(self) -> int:
        return len(self._handles)

    def __iter__(self) -> Iterator[TaskHandle]:
        return iter(self._handles)

    @property
    def handles(self) -> list[TaskHandle]:
        """The handles, in the order of the argument mappings (a copy)."""
        return list(self._handles)

    # -- waiting ---------------------------------------------------------------------------------

    def ready(self) -> bool:
        """Whether every task of the batch has ended."""
        return all(handle.done() for handle in self._handles)

    def done(self) -> bool:
        return self.ready()

    async def gather(self, *, return_exceptions: bool = False, timeout: float | None = None) -> list[Any]:
        """The results in order, as :func:`mcp_tasks_jupyter.gather` gives them."""
        return await gather(*self._handles, return_exceptions=return_exceptions, timeout=timeout)

    async def wait(self, timeout: float | None = None, *, return_exceptions: bool = False) -> list[Any]:
        """The results in order once all ended; TimeoutError after ``timeout`` seconds (nothing is
        cancelled: the batch goes on). A failed task raises its error unless ``return_exceptions``."""
        return await self.gather(return_exceptions=return_exceptions, timeout=timeout)

    def as_completed(self, *, timeout: float | None = None) -> AsyncIterator[TaskHandle]:
        """``async for handle in batch.as_completed()``: each handle as soon as it has ended."""
        return as_completed(self._handles, timeout=timeout)

    def results(self) -> list[ToolResult | BaseException | None]:
        """What each task ended with, in order: its ToolResult, its error, or None while it runs."""
        return [
            None if not h.done() else h.exception() if h.exception() is not None else h.result()
            for h in self._handles
        ]

    @property
    def finished(self) -> float | None:
        """When the last task ended (epoch seconds); None while one has not."""
        ends = [handle.finished for handle in self._handles]
        if not ends or any(end is None for end in ends):
            return None
        return max(end for end in ends if end is not None)

    # -- cancelling ------------------------------------------------------------------------------

    async def cancel(self) -> None:
        """Cancel every task: the queued ones end ``cancelled`` without being sent, the others are
        cancelled on the server. Raises the first failure to cancel, after trying every task."""
        while self._queue:  # first, so that no slot freed below starts a queued task
            self._cancel_queued(self._queue[0])
        running = [handle for handle in self._handles if not handle.done()]
        outcomes = await asyncio.gather(*(handle.cancel() for handle in running), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _cancel_one(self, handle: TaskHandle) -> None:
        """What ``handle.cancel()`` does for a task of this batch."""
        if handle in self._queue:
            self._cancel_queued(handle)
            return
        starting = self._starting.get(handle)
        if starting is not None:
            # Its creation is on the wire: cancel the task once the server has it.
            await asyncio.shield(starting)
        if not handle.done():
            await self._lifecycle.cancel(handle)

    def _cancel_queued(self, handle: TaskHandle) -> None:
        self._queue.remove(handle)
        self._lifecycle.finish(
            handle,
            error=TaskCancelled(
                "cancelled while queued: it was never sent to the server", server=self.server, tool=self.tool
            ),
        )

    # -- sending the queued tasks ----------------------------------------------------------------

    def _fill(self) -> None:
        while self._queue and len(self._sent) < self.limit and self._closed is None:
            handle = self._queue.popleft()
            self._sent.add(handle)
            args, preset = self._plan.pop(handle)
            self._lifecycle.sending(handle)
            starter = self._lifecycle.jobs.spawn(
                self._send(handle, args, preset), name=f"mcp-map {self.server}:{self.tool}"
            )
            self._starting[handle] = starter

    async def _send(self, handle: TaskHandle, args: dict[str, Any], preset: dict[str, Any] | None) -> None:
        lifecycle = self._lifecycle
        try:
            await lifecycle.start(self._spec, args, ttl=self._ttl, answers=preset, handle=handle)
        except asyncio.CancelledError:
            why = self._closed or "its start was cancelled"
            lifecycle.finish(
                handle,
                error=TaskLost(
                    f"{why} while it was being sent; the task may run on the server",
                    server=self.server,
                    tool=self.tool,
                ),
            )
            raise
        except MCPError as exc:
            from .lifecycle import as_task_failure

            lifecycle.finish(handle, error=as_task_failure(exc, handle))
        except Exception as exc:  # never leave a handle unfinished
            log.exception("starting a task of %r failed", self)
            lifecycle.finish(handle, error=exc)
        finally:
            self._starting.pop(handle, None)

    def _task_ended(self, handle: TaskHandle) -> None:
        self._ended += 1
        self._sent.discard(handle)
        self._fill()
        if self._ended == len(self._handles):
            for callback in tuple(self._on_end):
                try:
                    callback(self)
                except Exception:
                    log.exception("a batch end callback failed for %r", self)
            self._relay(handle)

    async def aclose(self, why: str) -> None:
        """The connection is closing: queued tasks end ``lost`` (never sent), sends in flight stop
        (those handles end ``lost`` too). Sent tasks are left as the connection leaves them."""
        self._closed = why
        while self._queue:
            handle = self._queue.popleft()
            self._lifecycle.finish(
                handle,
                error=TaskLost(f"{why} before this queued task was sent", server=self.server, tool=self.tool),
            )
        starters = list(self._starting.values())
        for starter in starters:
            starter.cancel()
        await asyncio.gather(*starters, return_exceptions=True)

    # -- views -----------------------------------------------------------------------------------

    def on_change(self, callback: Callable[[Batch], None]) -> Callable[[], None]:
        """Call ``callback(batch)`` whenever one of its tasks changes; returns an unsubscribe function."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def on_end(self, callback: Callable[[Batch], None]) -> None:
        """Call ``callback(batch)`` once every task has ended (at once scheduled if they have)."""
        if self._ended == len(self._handles):
            asyncio.get_running_loop().call_soon(callback, self)
        else:
            self._on_end.append(callback)

    def _relay(self, _handle: TaskHandle) -> None:
        for callback in tuple(self._callbacks):
            try:
                callback(self)
            except Exception:
                log.exception("a batch on_change callback failed for %r", self)

    def view(self, now: float | None = None) -> BatchView:
        """The snapshot every view of this batch draws (see :class:`BatchView`)."""
        now = time.time() if now is None else now
        counts: collections.Counter[str] = collections.Counter()
        progress = 0.0
        failed: list[BatchTask] = []
        timed: list[BatchTask] = []
        for index, handle in enumerate(self._handles):
            counts[handle.status] += 1
            done = handle.done()
            if done:
                progress += 1.0
            elif handle.progress is not None and handle.progress.fraction is not None:
                progress += handle.progress.fraction
            if handle.status == QUEUED:
                continue
            if done and len(failed) < FAILED_SHOWN and _failed(handle):
                failed.append(self._entry(index, handle, failure_message(handle) or "the tool reported an error"))
            if not handle.cached:
                timed.append(self._entry(index, handle))
        total = len(self._handles)
        fraction = progress / total if total else 1.0
        finished = self.finished
        elapsed = (finished or now) - self.started
        eta = None
        if finished is None and 0 < fraction < 1:
            eta = elapsed / fraction * (1 - fraction)
        timed.sort(key=lambda task: (task.finished or now) - task.started, reverse=True)
        order = {status: i for i, status in enumerate(STATUSES)}
        return BatchView(
            tool=self.tool,
            server=self.server,
            total=total,
            limit=self.limit,
            counts=dict(sorted(counts.items(), key=lambda item: order.get(item[0], len(order)))),
            ended=sum(1 for handle in self._handles if handle.done()),
            fraction=fraction,
            started=self.started,
            finished=finished,
            eta=eta,
            failed=tuple(failed),
            slowest=tuple(timed[:SLOWEST_SHOWN]),
        )

    @staticmethod
    def _entry(index: int, handle: TaskHandle, error: str | None = None) -> BatchTask:
        return BatchTask(
            index,
            arguments_label(handle.arguments) or "(no arguments)",
            handle.status,
            handle.started,
            handle.finished,
            error,
        )

    def __repr__(self) -> str:
        """``<Batch of 50 research tasks on demo: 50 completed>`` (no times: stable text)."""
        view = self.view()
        return f"<Batch of {view.total} {self.tool} tasks on {self.server}: {view.counts_text()}>"


def _failed(handle: TaskHandle) -> bool:
    """An ended task that did not give a result (cancelled ones are not failures), or a tool error."""
    if handle.status == CANCELLED:
        return False
    if handle.status in FAILURES or handle.exception() is not None:
        return True
    return handle.result().is_error


__all__ = ["DEFAULT_LIMIT", "Batch", "BatchTask", "BatchView", "arguments_label"]
