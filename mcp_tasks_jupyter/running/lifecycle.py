"""What happens to a task, from its start to its release: one ``TaskLifecycle`` per connection.

Read top to bottom:

1. **Start**: a tool call becomes a server-side task (``dialect.create``), an ordinary call behind the
   same handle (no task support), or a call the server decides about (ext, sep1686); or a handle comes
   from elsewhere: ``attach`` (a task id), ``resume`` (the task index), ``cached`` (a stored result).
2. **Record**: every handle started here is written to the task index and kept current.
3. **Poll**: one ``Poller`` per task (``poller.py``, where its pace, backoff and end are decided);
   here, what the dialect reports reaches it: a push (``pushed``: the poller is then trusted to pushes
   and polls as a safety net), a channel that opened or dropped (``pushes_changed``), a wake.
4. **Finish**: the result (or error) settles the handle; then **release**: progress listener, open
   questions (refused: their answer would be stale), registries, the dialect's own state.

The dialect reports what the server pushes through ``TaskEvents`` (``pushed``, ``wake``, ``log``,
questions); the handle is state and events only and calls back through the functions it was given.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..errors import (
    ConnectionFailed,
    InvalidMessage,
    MCPError,
    ProtocolError,
    RequestTimeout,
    TaskCancelled,
    TaskError,
    TaskFailed,
    TaskLost,
)
from ..index.task_index import Recorder, ServerIdentity, TaskIndex, notebook_path
from ..protocol import modern
from ..protocol.task_state import INPUT_REQUIRED, TERMINAL, TaskState
from ..protocol.types import Tool
from ..redact import scrub_data
from ..session.server_requests import HandlerError
from ..session.session import Session
from ..tasks.control import control_of
from ..tasks.handle import HandleControls, TaskHandle
from ..tasks.results import ToolResult
from .poll_clock import PollClock
from .poller import MAX_POLL_FAILURES, Poller

if TYPE_CHECKING:
    from ..dialects.dialect import TaskDialect

log = logging.getLogger(__name__)

#: Where the server decides whether a call becomes a task (ext, sep1686), how long ``start`` waits
#: for that decision before it returns a handle whose call is still running.
ACCEPT_WAIT_S = 2.0
#: How long a question naming an unknown task waits for a creation in flight to reveal that task.
CREATION_WAIT_S = 5.0
#: Ended tasks remembered (id → final status), so that a late question naming one is refused.
ENDED_TASKS_KEPT = 1000
#: Statuses pushed for tasks not known yet, kept until a creation's answer names their task (a push on the GET
#: stream can overtake the answer on its own connection); the oldest go first beyond this many.
EARLY_PUSHES_KEPT = 1024
LOGS_KEPT = 500
#: A task's log line's keys, level and logger up to this long are shared between lines (``sys.intern``).
SHARED_WORD_CHARS = 64

_tokens = itertools.count(1)


def new_progress_token() -> str:
    return f"mtj-{next(_tokens)}"


class TaskLifecycle:
    """Every task of one connection: built from its session, its dialect and (optionally) a task index."""

    def __init__(self, session: Session, dialect: TaskDialect, *, identity: Callable[[], ServerIdentity]) -> None:
        self.session = session
        self.dialect = dialect
        self._identity = identity
        #: Where every task's poller, every ordinary call behind a handle and every fan-out's sending
        #: run: a group of the connection's (``session/background.py``), closed with it.
        self.jobs = session.background.child(f"{session.name} (tasks)")
        #: Where the tasks started here are recorded (None: nowhere); see ``index/task_index.py``.
        self.index: TaskIndex | None = None
        #: Failed polls in a row (with backoff between them) before a task is declared lost.
        self.max_poll_failures = MAX_POLL_FAILURES
        #: Every unfinished task (by id) started or attached here: strong references.
        self.tasks: dict[str, TaskHandle] = {}
        #: Unfinished ordinary calls running behind handles.
        self.calls: set[TaskHandle] = set()
        self._runners: dict[TaskHandle, asyncio.Task[None]] = {}
        #: The poller of every task followed here (``poller.py``), and those trusted to their pushes.
        self._pollers: dict[TaskHandle, Poller] = {}
        self._trusted: set[Poller] = set()
        #: When each sleeping poller is next due, behind one timer.
        self.clock = PollClock()
        self._creating = 0
        self._arrivals: dict[str, asyncio.Future[TaskHandle]] = {}
        self._ended: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._early_pushes: collections.OrderedDict[str, TaskState] = collections.OrderedDict()
        #: What every handle made here may ask (a batch's handles share one of their own, ``batch_controls``);
        #: its ``owner`` says which connection made a handle, with no entry per handle (``owns``).
        self._controls = HandleControls(self.cancel, lambda: session.reconnecting, owner=self)
        #: Log notifications that belong to no task of this connection.
        self.logs: collections.deque[dict[str, Any]] = collections.deque(maxlen=LOGS_KEPT)
        session.when_channel_changes(self.pushes_changed)

    @property
    def server(self) -> str:
        return self.session.name

    def _new_handle(
        self,
        tool: str | None,
        arguments: dict[str, Any] | None,
        *,
        runs_as_task: bool,
        controls: HandleControls | None = None,
        token: str | None = None,
        queued: bool = False,
    ) -> TaskHandle:
        return TaskHandle(
            self.server,
            tool,
            arguments,
            runs_as_task=runs_as_task,
            progress_token=token or new_progress_token(),
            controls=controls or self._controls,
            generation=self.session.generation,
            queued=queued,
        )

    def owns(self, handle: TaskHandle) -> bool:
        """Whether ``handle`` was made by this connection (finished or not)."""
        return control_of(handle).controls.owner is self

    def batch_controls(self, cancel: Callable[[TaskHandle], Awaitable[None]], batch: str) -> HandleControls:
        """What the handles of one ``client.map`` batch may ask, one object for them all: ``cancel`` is what
        their ``cancel()`` does, ``batch`` the batch's id (``batch.batch_of``)."""
        return HandleControls(cancel, self._controls.reconnecting, owner=self, batch=batch)

    def live(self) -> list[TaskHandle]:
        """Every unfinished handle of this connection (tasks and ordinary calls)."""
        return [*self.tasks.values(), *self.calls]

    # == 1. start =====================================================================================

    def queued(
        self,
        spec: Tool,
        args: dict[str, Any],
        *,
        cancel: Callable[[TaskHandle], Awaitable[None]] | None = None,
        controls: HandleControls | None = None,
    ) -> TaskHandle:
        """A handle for a call not sent yet (``client.map`` keeps it waiting for a free slot): status
        ``queued`` until ``start(..., handle=it)`` sends it. Its ``cancel()`` does ``cancel``, or what
        ``controls`` (``batch_controls``, shared by a batch's handles) say."""
        as_task = self.dialect.runs_as_task(spec) and not self.dialect.server_decides
        if controls is None:
            assert cancel is not None, "queued: a cancel or the batch's controls"
            controls = HandleControls(cancel, self._controls.reconnecting, owner=self)
        return self._new_handle(spec.name, args, runs_as_task=as_task, controls=controls, queued=True)

    def sending(self, handle: TaskHandle) -> None:
        """A queued handle is about to be sent: from now on it is ``working`` (its clock starts)."""
        control_of(handle).sent(self.session.generation, as_task=handle.runs_as_task, answers=handle.answers)

    async def start(
        self,
        spec: Tool,
        args: dict[str, Any],
        *,
        ttl: int | None,
        answers: dict[str, Any] | None,
        handle: TaskHandle | None = None,
    ) -> TaskHandle:
        """Start ``spec`` with ``args``; the handle returns as soon as the server accepted the task.
        ``handle``: a queued one (``queued``) that this start sends, instead of a new one."""
        as_task = self.dialect.runs_as_task(spec)
        decides = as_task and self.dialect.server_decides
        # Where the server decides, the handle is an ordinary call until the answer says "task".
        if handle is None:
            handle = self._new_handle(spec.name, args, runs_as_task=as_task and not decides)
        control_of(handle).sent(self.session.generation, as_task=as_task and not decides, answers=answers)
        token = handle.progress_token
        self.session.server_requests.add_progress_listener(token, control_of(handle).progress_reported)
        if not as_task:
            self.calls.add(handle)
            self._run(
                handle,
                self._run_call(handle, self.plain_call(spec.name, args, token, timeout=None, handle=handle)),
            )
        elif decides:
            await self._start_decided(handle, spec, args, ttl, token)
        else:
            await self._create(handle, spec, args, ttl, token)
        self.record(handle)
        return handle

    async def _create(
        self, handle: TaskHandle, spec: Tool, args: dict[str, Any], ttl: int | None, token: str
    ) -> None:
        self._creating += 1
        try:
            created = await self.dialect.create(spec, args, ttl_ms=ttl, progress_token=token)
        except BaseException:
            self.session.server_requests.remove_progress_listener(token)
            raise
        finally:
            self._creating -= 1
        if isinstance(created, ToolResult):  # the server ran it inline
            self.calls.add(handle)
            control_of(handle).ran_inline()
            self.finish(handle, created)
            return
        control_of(handle).apply(created)
        self._track(created.task_id, handle)
        self._run(handle, self._poll(handle))
        self._take_early_push(created.task_id)

    async def _start_decided(
        self, handle: TaskHandle, spec: Tool, args: dict[str, Any], ttl: int | None, token: str
    ) -> None:
        """A call the server may turn into a task: return once it decided (or ACCEPT_WAIT_S passed:
        the call then goes on behind the handle, which becomes a task handle if it does)."""
        decided: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
        self.calls.add(handle)
        runner = self._run(handle, self._run_decided(handle, spec, args, ttl, token, decided))
        try:
            await asyncio.wait([decided], timeout=ACCEPT_WAIT_S)
        except asyncio.CancelledError:
            runner.cancel()  # nobody got the handle: withdraw the call
            raise
        failure = decided.result() if decided.done() else None
        if failure is not None:
            raise failure  # refused at once, as a failed task creation would be

    async def _run_decided(
        self,
        handle: TaskHandle,
        spec: Tool,
        args: dict[str, Any],
        ttl: int | None,
        token: str,
        decided: asyncio.Future[BaseException | None],
    ) -> None:
        self._creating += 1
        try:
            outcome = await self.dialect.create(spec, args, ttl_ms=ttl, progress_token=token, handle=handle)
        except asyncio.CancelledError:
            _settle(decided, None)
            self.finish(
                handle, error=TaskCancelled("the call was cancelled", server=self.server, tool=handle.tool)
            )
            return
        except MCPError as exc:
            _settle(decided, exc)
            self.finish(handle, error=unanswered_call(exc, handle) or as_task_failure(exc, handle))
            return
        except Exception as exc:  # never leave a handle unfinished
            _settle(decided, exc)
            self.finish(handle, error=exc)
            return
        finally:
            self._creating -= 1
        _settle(decided, None)
        if isinstance(outcome, ToolResult):
            self.finish(handle, outcome)
            return
        self.calls.discard(handle)
        self._track(outcome.task_id, handle)
        control_of(handle).became_task(outcome)
        polling = self._poll(handle)
        self._take_early_push(outcome.task_id)
        await polling

    async def plain_call(
        self,
        tool: str,
        args: dict[str, Any],
        token: str | None,
        *,
        timeout: float | None,
        handle: TaskHandle | None = None,
    ) -> ToolResult:
        """An ordinary ``tools/call`` (on the stateless wire, following ``input_required`` rounds)."""
        params: dict[str, Any] = {"name": tool, "arguments": args}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        if self.session.modern:
            raw = await self.session.request_complete("tools/call", params, timeout=timeout, context=handle)
            if modern.result_type(raw) != modern.COMPLETE:
                raise InvalidMessage(
                    f"a {modern.result_type(raw)!r} result to tools/call, which this client did not ask for",
                    server=self.server,
                    method="tools/call",
                    data=raw,
                )
        else:
            raw = await self.session.request("tools/call", params, timeout=timeout)
        try:
            return ToolResult.from_wire(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method="tools/call", data=raw) from None

    async def _run_call(self, handle: TaskHandle, request: Awaitable[ToolResult]) -> None:
        """An ordinary (non-task) call behind the handle."""
        try:
            self.finish(handle, await request)
        except asyncio.CancelledError:
            self.finish(
                handle, error=TaskCancelled("the call was cancelled", server=self.server, tool=handle.tool)
            )
        except MCPError as exc:
            self.finish(handle, error=as_task_failure(exc, handle))
        except Exception as exc:  # never leave a handle unfinished
            self.finish(handle, error=exc)

    async def call_decided(self, spec: Tool, args: dict[str, Any], timeout: float | None) -> ToolResult:
        """``call_tool`` where the server may answer any call with a task: poll it to its end."""
        handle: TaskHandle | None = None
        try:
            async with asyncio.timeout(timeout):
                handle = await self.start(spec, args, ttl=None, answers=None)
                return await handle
        except TimeoutError:
            if handle is not None and handle.runs_as_task:
                raise  # a task goes on on the server (``client.tasks`` has its handle)
            if handle is not None:
                self.withdraw(handle)  # an ordinary call: withdraw it, as a plain call's timeout does
            raise RequestTimeout(f"tools/call: no answer within {timeout} s", server=self.server) from None

    def attach(self, task_id: str, *, tool: str | None = None) -> TaskHandle:
        """A handle for a task the server already has (e.g. started before a kernel restart)."""
        existing = self.tasks.get(task_id)
        if existing is not None:
            return existing
        handle = self._new_handle(tool, None, runs_as_task=True)
        control_of(handle).named(task_id)
        self.tasks[task_id] = handle
        self._run(handle, self._poll(handle, poll_now=True))
        return handle

    def adopt(self, handle: TaskHandle, task_id: str) -> None:
        """A queued handle (``queued``) becomes the task ``task_id`` the server already has, sent by another
        client that stopped (a sweep's runner taken over): from now on it is polled as an attached one."""
        control_of(handle).sent(self.session.generation, as_task=True, answers=handle.answers)
        control_of(handle).named(task_id)
        self._track(task_id, handle)
        self._run(handle, self._poll(handle, poll_now=True))

    def cached(self, tool: str, args: dict[str, Any], target: str) -> TaskHandle | None:
        """A finished handle holding the stored result of the same call, if the index has one."""
        if self.index is None:
            return None
        record = self.index.cached(target, tool, args)
        if record is None or record.result is None:
            return None
        try:
            result = ToolResult.from_wire(record.result)
        except ValueError:
            return None
        handle = self._new_handle(tool, args, runs_as_task=False)
        control_of(handle).from_cache(result, record.id, record.created_at)
        return handle

    def resume(self, target: str, notebook: str | None, *, stdio: bool) -> list[TaskHandle]:
        """Attach again to ``notebook``'s unfinished tasks on this server, as the task index has them
        (see ``Client.resume``)."""
        assert self.index is not None
        handles: list[TaskHandle] = []
        for record in self.index.unfinished(target, notebook):
            if record.task_id is None:
                self.index.mark(record.id, "lost", "it ran as an ordinary call, which ended with its connection")
                continue
            if stdio and record.task_id not in self.tasks:
                self.index.mark(record.id, "lost", "it was bound to a stdio server process that has ended")
                continue
            known = record.task_id in self.tasks
            handle = self.attach(record.task_id, tool=record.tool)
            if not known:
                control_of(handle).resumed_from(record.id, record.arguments, record.out_var)
                self._follow(handle, Recorder(self.index, record.id))
            handles.append(handle)
        return handles

    # == 2. record ====================================================================================

    def record(self, handle: TaskHandle) -> None:
        """Record ``handle`` in the index and keep its row current (on changes of state only)."""
        if self.index is None or handle.tool is None:
            return
        row = self.index.add(
            self._identity(),
            handle.tool,
            handle.arguments,
            task_id=handle.task_id,
            status=handle.server_status,
            status_message=handle.status_message,
            created_at=handle.created_at,
            ttl_ms=handle.ttl_ms,
            notebook=notebook_path(),
            started_at=handle.started,
        )
        if row is None:
            return
        control_of(handle).recorded(row)
        self._follow(handle, Recorder(self.index, row))

    @staticmethod
    def _follow(handle: TaskHandle, recorder: Recorder) -> None:
        handle.on_change(recorder)
        if handle.done():
            recorder(handle)

    # == 3. poll ======================================================================================

    def _run(self, handle: TaskHandle, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        runner = self.jobs.spawn(coro, name=f"mcp-task {handle.tool} {handle.task_id or ''}")
        self._runners[handle] = runner
        runner.add_done_callback(lambda _r: self._runners.pop(handle, None))
        return runner

    def _poll(self, handle: TaskHandle, poll_now: bool = False) -> Coroutine[Any, Any, None]:
        """The poller of ``handle`` (``poller.py``: pace, backoff and end are decided there), to run."""
        poller = self._pollers[handle] = Poller(self, handle)
        return poller.run(poll_now)

    def distrust(self, poller: Poller) -> None:
        """``poller``'s task is paced by polls again (its pushes fell silent, or the channel dropped)."""
        poller.pushed_at = None
        self._trusted.discard(poller)

    # -- what the dialect reports (TaskEvents) ----------------------------------------------------

    def handle_of(self, task_id: str) -> TaskHandle | None:
        """The live handle of ``task_id`` (also one still being created, where the id is known)."""
        return self.tasks.get(task_id) or self.dialect.creating(task_id)

    def awaits(self, task_id: str) -> bool:
        """Whether news of ``task_id`` matters here: a live task's, or one a creation in flight may name."""
        return self.handle_of(task_id) is not None or self._may_be_created(task_id)

    def _may_be_created(self, task_id: str) -> bool:
        return self._creating > 0 and task_id not in self._ended

    def pushed(self, task_id: str, state: TaskState) -> None:
        """A status pushed by the server: take it, and wake the poller if it matters now."""
        handle = self.handle_of(task_id)
        if handle is None:
            if self._may_be_created(task_id):
                early = self._early_pushes
                early[task_id] = state
                early.move_to_end(task_id)
                if len(early) > EARLY_PUSHES_KEPT:
                    early.popitem(last=False)
            return
        control_of(handle).apply(state)
        poller = self._pollers.get(handle)
        if poller is not None and self.dialect.push_live(handle):
            # Its changes come by push: polls become a safety net, counted from this news.
            poller.pushed_at = asyncio.get_running_loop().time()
            self._trusted.add(poller)
        if state.status in TERMINAL or state.status == INPUT_REQUIRED:
            self.wake(handle)

    def _take_early_push(self, task_id: str) -> None:
        """A status pushed for ``task_id`` before the answer that named it came: taken now, its poller made."""
        state = self._early_pushes.pop(task_id, None)
        if state is not None:
            self.pushed(task_id, state)

    def pushes_changed(self) -> None:
        """A push channel opened or dropped: no task is trusted to its pushes until one comes again,
        and every poller looks again when its next poll is due (at its own interval)."""
        trusted, self._trusted = self._trusted, set()
        for poller in trusted:
            poller.pushed_at = None
            poller.wake()

    def wake(self, handle: TaskHandle) -> None:
        """Poll ``handle`` now (e.g. an answer given may have changed it)."""
        poller = self._pollers.get(handle)
        if poller is not None:
            poller.wake()

    def log(self, handle: TaskHandle | None, params: dict[str, Any]) -> None:
        """A log notification, of ``handle``'s task or (None) of the connection."""
        params = scrub_data(params)  # the server may echo a secret it was given
        if handle is not None:
            control_of(handle).logged(_untagged(params, handle.task_id))
        else:
            self.logs.append(params)

    async def task_asking(self, task_id: str) -> TaskHandle:
        """The task a server question names: live, or (the question can overtake the answer to the
        creation request) revealed by a creation in flight within CREATION_WAIT_S. A question naming a
        task that ended, or one this client does not know, is refused (HandlerError): never asked."""
        handle = self.handle_of(task_id)
        if handle is not None:
            return handle
        if task_id in self._ended:
            raise HandlerError(-32602, ended_reason(task_id, self._ended[task_id]))
        if self._creating:
            arrival = self._arrivals.get(task_id)
            if arrival is None:
                arrival = self._arrivals[task_id] = asyncio.get_running_loop().create_future()
            try:
                return await asyncio.wait_for(asyncio.shield(arrival), CREATION_WAIT_S)
            except TimeoutError:
                pass
            finally:
                if self._arrivals.get(task_id) is arrival and not arrival.done():
                    del self._arrivals[task_id]
        log.warning("%s: refused a question naming task %s, which this client does not know", self.server, task_id)
        raise HandlerError(-32602, f"this client knows no task {task_id!r}; the question is not answered")

    def _track(self, task_id: str, handle: TaskHandle) -> None:
        self.tasks[task_id] = handle
        arrival = self._arrivals.pop(task_id, None)
        if arrival is not None and not arrival.done():
            arrival.set_result(handle)

    def connection_changed(self) -> None:
        """Reconnecting started or ended: every unfinished task's view says so."""
        for handle in list(self.tasks.values()):
            control_of(handle).changed()

    def connection_lost(self) -> None:
        """Pollers notice on their next request; wake them so nobody waits a whole poll interval."""
        for handle in list(self.tasks.values()):
            self.wake(handle)

    # == 4. finish and release ========================================================================

    def finish(
        self, handle: TaskHandle, result: ToolResult | None = None, error: BaseException | None = None
    ) -> None:
        """End ``handle`` with its result or error (once), then release it."""
        if control_of(handle).settle(result, error):
            self.release(handle)
            control_of(handle).changed()

    def release(self, handle: TaskHandle) -> None:
        """The handle is finished: drop every reference the connection kept for it."""
        self.session.server_requests.remove_progress_listener(handle.progress_token)
        for request_id in control_of(handle).open_questions_dropped():
            # A finished task's question is stale: the server hears so instead of an answer.
            self.session.server_requests.refuse(request_id, ended_reason(handle.task_id, handle.server_status))
        if handle.task_id is not None:
            self.tasks.pop(handle.task_id, None)
            self._ended[handle.task_id] = handle.server_status
            if len(self._ended) > ENDED_TASKS_KEPT:
                self._ended.popitem(last=False)
        self.calls.discard(handle)
        poller = self._pollers.pop(handle, None)
        if poller is not None:
            self._trusted.discard(poller)

    async def cancel(self, handle: TaskHandle) -> None:
        """Ask the server to cancel the task (an ordinary call is withdrawn); the handle then ends."""
        if handle.done():
            return
        if not handle.runs_as_task:
            self.withdraw(handle)
            return
        assert handle.task_id is not None
        state = await self.dialect.cancel(handle.task_id)
        if state is None:
            # Only acknowledged (ext), or it was already terminal: ask once now how it stands rather
            # than wait for the next poll, which pushes may have put 10 intervals away.
            try:
                state = await self.dialect.get(handle.task_id)
            except MCPError:
                state = None  # the poller will see it
        if state is not None:
            control_of(handle).apply(state)
        self.wake(handle)  # the poller ends a task the answer made terminal, now

    def withdraw(self, handle: TaskHandle) -> None:
        """Stop the call or poller behind ``handle`` (an ordinary call is cancelled on the server)."""
        runner = self._runners.get(handle)
        if runner is not None:
            runner.cancel()

    def end_here(self, handle: TaskHandle, why: str, hint: str = "") -> None:
        """This side lets go of an unfinished task (its connection was closed or replaced)."""
        if not handle.done():
            self.finish(
                handle,
                error=TaskLost(
                    f"{why}; the task may still run on the server{hint}",
                    server=handle.server,
                    task_id=handle.task_id,
                    tool=handle.tool,
                ),
            )

    async def aclose(self) -> None:
        """Stop every poller and call (tasks keep running on the server)."""
        await self.jobs.aclose()  # every poller and call (a fan-out's sending too)
        self.clock.close()
        if self.index is not None:
            self.index.flush()  # the last changes, batched on this loop, before the loop may stop


def ended_reason(task_id: str | None, status: str) -> str:
    return f"task {task_id!r} has already ended ({status}); its question is not answered"


def as_task_failure(exc: MCPError, handle: TaskHandle) -> TaskError:
    """The error a handle ends with when a request about its task failed with ``exc``."""
    if isinstance(exc, TaskError):
        return exc
    if isinstance(exc, ConnectionFailed):
        return TaskLost(
            f"lost the connection: {exc.detail}", server=handle.server, task_id=handle.task_id, tool=handle.tool
        )
    error = exc.error if isinstance(exc, ProtocolError) else None
    return TaskFailed(
        exc.detail,
        server=handle.server,
        task_id=handle.task_id,
        tool=handle.tool,
        status_message=handle.status_message,
        error=error,
    )


def unanswered_call(exc: MCPError, handle: TaskHandle) -> TaskLost | None:
    """The error of a call the server decides about (ext, sep1686) whose connection broke before any answer
    came: the server may have started the work or not, and with no task id the client cannot ask it, nor
    send the call again without risking the work twice. What to do is the person's: said here."""
    if not isinstance(exc, ConnectionFailed) or handle.task_id is not None:
        return None
    return TaskLost(
        f"the connection broke before the server answered the call ({exc.detail}). It may or may not have "
        "started the work, and without a task id this client cannot ask it; look on the server (its tasks "
        "or logs) before starting the call again, which could run the work twice",
        server=handle.server,
        tool=handle.tool,
    )


def _settle(future: asyncio.Future[BaseException | None], value: BaseException | None) -> None:
    if not future.done():
        future.set_result(value)


def _untagged(params: dict[str, Any], task_id: str | None) -> dict[str, Any]:
    """A task's log line as its handle keeps it (a sweep's handles each keep theirs): without the ``_meta`` tag
    that named its task (``{"taskId": ...}`` under the dialect's key: the handle is that task), its keys and
    its level and logger shared (``sys.intern``) rather than one copy per line; what it says is kept whole."""
    line: dict[str, Any] = {}
    for key, value in params.items():
        if key == "_meta" and isinstance(value, dict) and task_id is not None:
            value = {k: v for k, v in value.items() if not (isinstance(v, dict) and v == {"taskId": task_id})}
            if not value:
                continue
        elif key in ("level", "logger") and isinstance(value, str) and len(value) <= SHARED_WORD_CHARS:
            value = sys.intern(value)
        line[sys.intern(key) if isinstance(key, str) and len(key) <= SHARED_WORD_CHARS else key] = value
    return line


__all__ = ["TaskLifecycle", "as_task_failure", "ended_reason"]
