"""Client: one connected MCP server, its tools, and the tasks started on it."""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import os
from typing import Any, Awaitable, Callable, Generator, Sequence

from . import elicitation
from .dialects import STATEFUL, STATELESS, check_dialect, select_dialect
from .dialects.base import TaskDialect
from .errors import (ConnectionFailed, InvalidMessage, MCPError, RequestTimeout, TaskCancelled, ToolNotFound,
                     UsageError)
from .handshake import PROBE_TIMEOUT_S, check_version, handshake
from .index import Recorder, ServerIdentity, TaskIndex, default_index, notebook_path
from .protocol import headers as wire_headers
from .protocol import jsonrpc, modern, tasks_2025, tasks_ext, tasks_sep1686
from .protocol.bounds import MAX_LIST_PAGES
from .protocol.tasks import TaskState, parse_task
from .protocol.types import (CreateMessageRequestParams, ElicitRequestParams, Implementation,
                             ListToolsResult, Tool)
from .redact import scrub, scrub_data
from .results import ToolResult
from .session import RECONNECT_FOR_S, HandlerError, Session
from .tasks import MAX_POLL_FAILURES, TaskHandle, _as_task_failure
from .transport import StdioTransport, StreamableHTTPTransport, Transport

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

DEFAULT_CALL_TIMEOUT_S = 600.0
#: Where the server decides whether a call becomes a task (ext, sep1686), how long ``start_task``
#: waits for that decision before it returns a handle whose call is still running.
ACCEPT_WAIT_S = 2.0
#: How long a question naming an unknown task waits for a creation in flight to reveal that task.
CREATION_WAIT_S = 5.0
#: Ended tasks remembered (id → final status), so that a late question naming one is refused.
ENDED_TASKS_KEPT = 1000
_token_counter = itertools.count(1)


class Client:
    """A connection to one MCP server. Make one with ``await mtj.connect(...)``."""

    def __init__(self, session: Session, dialect: TaskDialect, *,
                 elicitation_handler: Handler | None, sampling_handler: Handler | None) -> None:
        self.session = session
        self.dialect = dialect
        self.elicitation_handler = elicitation_handler
        #: Asks a person when neither the handler nor a task's answers settle a question (the
        #: notebook runtime sets it to show a form); same signature as an elicitation handler.
        self.ask_user: Handler | None = None
        self.sampling_handler = sampling_handler
        self.server_info = session.server_info or Implementation(name=session.name)
        self.protocol_version = session.protocol_version
        self.capabilities = session.server_capabilities
        self.instructions = session.instructions
        #: Every unfinished task this client started or attached to (strong references).
        self.tasks: dict[str, TaskHandle] = {}
        #: Unfinished ordinary calls running behind handles.
        self._calls: set[TaskHandle] = set()
        #: Creation requests awaiting the server's answer, and questions waiting for their task.
        self._creating = 0
        self._arrivals: dict[str, asyncio.Future[TaskHandle]] = {}
        self._ended: collections.OrderedDict[str, str] = collections.OrderedDict()
        self.logs: collections.deque[dict[str, Any]] = collections.deque(maxlen=500)
        self._tools: dict[str, Tool] | None = None
        self._closed = False
        #: Failed polls in a row (with backoff between them) before a task is declared lost.
        self.max_poll_failures = MAX_POLL_FAILURES
        #: Where the tasks this client starts are recorded (None: nowhere); see ``index.py``.
        self.index: TaskIndex | None = None
        #: The URL or command as shown (never header or env values): the server's identity in the index.
        self.target: str = session.transport.label
        session.notification_handlers[tasks_2025.STATUS_NOTIFICATION] = self._on_task_status
        session.notification_handlers[tasks_ext.NOTIFICATION] = self._on_task_push
        session.notification_handlers["notifications/message"] = self._on_log
        session.request_handlers["elicitation/create"] = self._on_elicit
        session.request_handlers["sampling/createMessage"] = self._on_sampling
        session.answer_inputs = self.answer_inputs
        session.on_lost.append(self._on_lost)
        session.on_connection.append(self._on_connection)
        dialect.install()

    @property
    def name(self) -> str:
        """The server's name as used in messages and errors."""
        return self.session.name

    @property
    def transport(self) -> Transport:
        return self.session.transport

    def describe(self) -> dict[str, Any]:
        """What this connection is: transport, protocol, dialect (and why), task capabilities."""
        return scrub_data({**self.transport.describe(), "server": self.server_info.name,
                           "version": self.server_info.version, "protocol": self.protocol_version,
                           "stateless": self.session.modern, "dialect": self.dialect.name,
                           "dialect_reason": self.dialect.reason, "tasks": self.capabilities.get("tasks"),
                           "open_tasks": len(self.tasks), "reconnecting": self.session.reconnecting,
                           "sessions_started": self.session.generation + 1})

    @property
    def identity(self) -> ServerIdentity:
        """Which server this is, for the task index (what may be shown: no header or env values)."""
        return ServerIdentity(self.name, self.target, self.transport.kind, self.protocol_version,
                              self.dialect.name)

    # -- tools ---------------------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> list[Tool]:
        """Every tool the server offers (all pages), cached after the first call.

        Over stateless HTTP, a tool with an invalid ``x-mcp-header`` declaration is left out (with
        a warning in the log); the valid declarations say which arguments travel as headers.
        """
        if self._tools is None or refresh:
            tools: dict[str, Tool] = {}
            headers: dict[str, wire_headers.ParamHeaders] = {}
            check = self.session.modern and self.transport.carries_headers
            cursor: str | None = None
            seen: set[str] = set()
            for page_number in range(MAX_LIST_PAGES + 1):
                if page_number == MAX_LIST_PAGES:
                    log.warning("%s: tools/list still had more after %d pages; listing stopped there",
                                self.name, MAX_LIST_PAGES)
                    break
                raw = await self.session.request("tools/list", {"cursor": cursor} if cursor else {})
                page = self.session.validate(ListToolsResult, raw, "tools/list result", "tools/list")
                for tool in page.tools:
                    if check:
                        try:
                            spec = wire_headers.param_headers(tool.input_schema)
                        except ValueError as exc:
                            log.warning("%s: tool %r left out: %s", self.name, tool.name, exc)
                            continue
                        if spec:
                            headers[tool.name] = spec
                    tools[tool.name] = tool
                cursor = page.next_cursor
                if not cursor or cursor in seen:
                    break
                seen.add(cursor)
            self._tools = tools
            if check:
                self.session.param_headers = headers
        return list(self._tools.values())

    async def tool(self, name: str) -> Tool:
        """The named tool, or ToolNotFound listing what the server has."""
        if self._tools is None or name not in self._tools:
            await self.list_tools(refresh=self._tools is not None)
        assert self._tools is not None
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            raise ToolNotFound(f"no tool named {name!r} (tools: {known})", server=self.name)
        return tool

    def _check_arguments(self, tool: Tool, arguments: dict[str, Any]) -> None:
        missing = [a for a in tool.required_arguments if a not in arguments]
        if missing:
            raise UsageError(f"tool {tool.name!r} needs argument(s) {', '.join(missing)} "
                             f"(given: {', '.join(arguments) or 'none'})", server=self.name)

    # -- tasks ---------------------------------------------------------------------------------

    async def start_task(self, tool: str, arguments: dict[str, Any] | None = None, *,
                         ttl: int | None = None, answers: dict[str, Any] | None = None,
                         cache: bool = False) -> TaskHandle:
        """Start ``tool`` as a task and return its handle as soon as the server has accepted it.

        ``ttl`` is the retention asked for, in milliseconds (the server may change it). A tool that
        cannot run as a task here runs as an ordinary call in the background; ``handle.runs_as_task``
        is then False. ``answers`` answer the task's questions (elicitations) without asking anyone,
        whenever they satisfy the question's schema (defaults fill the gaps); otherwise the
        elicitation handler is asked. An ``elicitation_handler`` given to ``connect`` decides first.

        With ``cache=True`` the stored result of an identical earlier completed call (same server,
        tool and arguments, from the task index) comes back at once, without asking the server: the
        handle is already done and ``handle.cached`` is True. Nothing is cached unless asked.
        """
        self._check_open()
        if arguments is not None and not isinstance(arguments, dict):
            raise UsageError(f"arguments for {tool!r} must be a mapping, not {type(arguments).__name__}",
                             server=self.name)
        args = dict(arguments or {})
        if cache:
            hit = self._cached(tool, args)
            if hit is not None:
                return hit
        spec = await self.tool(tool)
        self._check_arguments(spec, args)
        handle = await self._start_task(spec, tool, args, ttl, answers)
        self._record(handle)
        return handle

    async def _start_task(self, spec: Tool, tool: str, args: dict[str, Any], ttl: int | None,
                          answers: dict[str, Any] | None) -> TaskHandle:
        token = f"mtj-{next(_token_counter)}"
        as_task = self.dialect.runs_as_task(spec)
        decides = as_task and self.dialect.server_decides
        # Where the server decides, the handle is an ordinary call until the answer says "task".
        handle = TaskHandle(self, tool, args, runs_as_task=as_task and not decides, progress_token=token)
        handle.answers = dict(answers) if answers else None
        self.session.add_progress_listener(token, handle._on_progress)
        if not as_task:
            self._calls.add(handle)
            handle._start(handle._run_call(self._plain_call(tool, args, token, timeout=None, handle=handle)))
            return handle
        if decides:
            return await self._start_decided(handle, spec, args, ttl, token)
        self._creating += 1
        try:
            created = await self.dialect.create(spec, args, ttl_ms=ttl, progress_token=token)
        except BaseException:
            self.session.remove_progress_listener(token)
            raise
        finally:
            self._creating -= 1
        if isinstance(created, ToolResult):
            self._calls.add(handle)
            handle.runs_as_task = False
            handle._finish(created)
            return handle
        handle._apply(created)
        self._track(created.task_id, handle)
        handle._start(handle._poll(self.dialect))
        return handle

    def _record(self, handle: TaskHandle) -> None:
        """Record ``handle`` in the index and keep its row current (on changes of state only)."""
        if self.index is None or handle.tool is None:
            return
        row = self.index.add(self.identity, handle.tool, handle.arguments, task_id=handle.task_id,
                             status=handle.status, status_message=handle.status_message,
                             created_at=handle.created_at, ttl_ms=handle.ttl_ms, notebook=notebook_path())
        if row is None:
            return
        handle.index_row = row
        recorder = Recorder(self.index, row)
        handle.on_change(recorder)
        if handle.done():
            recorder(handle)

    def _cached(self, tool: str, args: dict[str, Any]) -> TaskHandle | None:
        """A finished handle holding the stored result of the same call, if the index has one."""
        if self.index is None:
            return None
        record = self.index.cached(self.target, tool, args)
        if record is None or record.result is None:
            return None
        try:
            result = ToolResult.from_wire(record.result)
        except ValueError:
            return None
        handle = TaskHandle(self, tool, args, runs_as_task=False, progress_token=f"mtj-{next(_token_counter)}")
        handle.cached = True
        handle.created_at = record.created_at
        handle.status_message = "cached result of an earlier identical call"
        handle._finish(result)
        return handle

    def resume(self, *, notebook: str | None = None) -> list[TaskHandle]:
        """Attach again to this notebook's unfinished tasks on this server, as the task index has them.

        ``notebook`` defaults to the current one (``JPY_SESSION_NAME``; None: tasks started from no
        known notebook). Tasks the server no longer knows end as ``lost`` (or ``expired``), with the
        reason in their record; tasks of a stdio server (its process ended) or ordinary calls (they end
        with their connection) are marked ``lost`` without asking. Returns the resumed handles.
        """
        self._check_open()
        if self.index is None:
            raise UsageError("this client has no task index to resume from", server=self.name)
        notebook = notebook if notebook is not None else notebook_path()
        handles: list[TaskHandle] = []
        for record in self.index.unfinished(self.target, notebook):
            if record.task_id is None:
                self.index.mark(record.id, "lost", "it ran as an ordinary call, which ended with its connection")
                continue
            if self.transport.kind == "stdio" and record.task_id not in self.tasks:
                self.index.mark(record.id, "lost", "it was bound to a stdio server process that has ended")
                continue
            known = record.task_id in self.tasks
            handle = self.attach(record.task_id, tool=record.tool)
            if not known:
                handle.arguments = record.arguments
                handle.resumed = True
                handle.out_var = record.out_var
                handle.index_row = record.id
                recorder = Recorder(self.index, record.id)
                handle.on_change(recorder)
                if handle.done():
                    recorder(handle)
            handles.append(handle)
        return handles

    async def _start_decided(self, handle: TaskHandle, spec: Tool, args: dict[str, Any], ttl: int | None,
                             token: str) -> TaskHandle:
        """Start a call the server may turn into a task; return once it decided (or ACCEPT_WAIT_S
        passed: the call then goes on behind the handle, which becomes a task handle if it does)."""
        decided: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
        self._calls.add(handle)
        handle._start(self._run_decided(handle, spec, args, ttl, token, decided))
        try:
            await asyncio.wait([decided], timeout=ACCEPT_WAIT_S)
        except asyncio.CancelledError:
            if handle._runner is not None:
                handle._runner.cancel()  # nobody got the handle: withdraw the call
            raise
        failure = decided.result() if decided.done() else None
        if failure is not None:
            raise failure  # refused at once, as a failed task creation would be
        return handle

    async def _run_decided(self, handle: TaskHandle, spec: Tool, args: dict[str, Any], ttl: int | None,
                           token: str, decided: asyncio.Future[BaseException | None]) -> None:
        self._creating += 1
        try:
            outcome = await self.dialect.create(spec, args, ttl_ms=ttl, progress_token=token, handle=handle)
        except asyncio.CancelledError:
            _settle(decided, None)
            handle._finish(error=TaskCancelled("the call was cancelled", server=self.name, tool=handle.tool))
            return
        except MCPError as exc:
            _settle(decided, exc)
            handle._finish(error=_as_task_failure(exc, handle))
            return
        except Exception as exc:  # never leave a handle unfinished
            _settle(decided, exc)
            handle._finish(error=exc)
            return
        finally:
            self._creating -= 1
        _settle(decided, None)
        if isinstance(outcome, ToolResult):
            handle._finish(outcome)
            return
        handle.runs_as_task = True
        handle._apply(outcome)
        self._calls.discard(handle)
        self._track(outcome.task_id, handle)
        handle._changed()
        await handle._poll(self.dialect)

    def attach(self, task_id: str, *, tool: str | None = None) -> TaskHandle:
        """A handle for a task the server already has (e.g. started before a kernel restart)."""
        self._check_open()
        existing = self.tasks.get(task_id)
        if existing is not None:
            return existing
        handle = TaskHandle(self, tool, None, runs_as_task=True, progress_token=f"mtj-{next(_token_counter)}")
        handle.task_id = task_id
        self.tasks[task_id] = handle
        handle._start(handle._poll(self.dialect, poll_now=True))
        return handle

    async def list_tasks(self) -> list[TaskState]:
        """The server's tasks (all pages) where it offers ``tasks/list``; else this client's own."""
        if self.dialect.supports_list:
            return await self.dialect.list()
        return [TaskState(h.task_id, h.status, h.status_message, h.created_at, h.last_updated_at,
                          h.ttl_ms, h.poll_interval_ms) for h in self.tasks.values() if h.task_id]

    async def delete_task(self, task_id: str) -> None:
        """Ask the server to forget a task and its result (``tasks/delete``, SEP-1686 servers only)."""
        self._check_open()
        if not self.dialect.supports_delete:
            raise UsageError(f"the {self.dialect.name} task dialect cannot delete tasks", server=self.name)
        await self.dialect.delete(task_id)

    async def call_tool(self, tool: str, arguments: dict[str, Any] | None = None, *,
                        timeout: float | None = DEFAULT_CALL_TIMEOUT_S) -> ToolResult:
        """Call a tool and wait for its result; runs as a task when the tool requires one, or
        when the server answers with a task (ext): that task is then polled to its end.

        A server's questions on the way (elicitation, also as ``input_required`` results) go
        through the same answering path as a task's."""
        self._check_open()
        args = dict(arguments or {})
        spec = await self.tool(tool)
        if self.dialect.unsolicited_tasks:
            return await self._call_decided(tool, args, timeout)
        if self.dialect.requires_task(spec) and self.dialect.runs_as_task(spec):
            handle = await self.start_task(tool, args)
            async with asyncio.timeout(timeout):
                return await handle
        return await self._plain_call(tool, args, None, timeout=timeout)

    async def _call_decided(self, tool: str, args: dict[str, Any], timeout: float | None) -> ToolResult:
        handle: TaskHandle | None = None
        try:
            async with asyncio.timeout(timeout):
                handle = await self.start_task(tool, args)
                return await handle
        except TimeoutError:
            if handle is not None and handle.runs_as_task:
                raise  # a task goes on on the server (``client.tasks`` has its handle)
            if handle is not None and handle._runner is not None:
                handle._runner.cancel()  # an ordinary call: withdraw it, as a plain call's timeout does
            raise RequestTimeout(f"tools/call: no answer within {timeout} s", server=self.name) from None

    async def _plain_call(self, tool: str, args: dict[str, Any], token: str | None, *,
                          timeout: float | None, handle: TaskHandle | None = None) -> ToolResult:
        params: dict[str, Any] = {"name": tool, "arguments": args}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        if self.session.modern:
            raw = await self.session.request_complete("tools/call", params, timeout=timeout, context=handle)
            if modern.result_type(raw) != modern.COMPLETE:
                raise InvalidMessage(f"a {modern.result_type(raw)!r} result to tools/call, which this "
                                     f"client did not ask for", server=self.name, method="tools/call", data=raw)
        else:
            raw = await self.session.request("tools/call", params, timeout=timeout)
        try:
            return ToolResult.from_wire(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.name, method="tools/call", data=raw) from None

    # -- bookkeeping ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError("this client is closed", server=self.name)
        if self.session.closed_error is not None:
            raise self.session.closed_error

    def _release(self, handle: TaskHandle) -> None:
        self.session.remove_progress_listener(handle.progress_token)
        for request_id in list(handle.pending_input):
            # A finished task's question is stale: the server hears so instead of an answer.
            self.session.refuse_serving(request_id, _ended_reason(handle.task_id, handle.status))
        if handle.task_id is not None:
            self.tasks.pop(handle.task_id, None)
            self._ended[handle.task_id] = handle.status
            if len(self._ended) > ENDED_TASKS_KEPT:
                self._ended.popitem(last=False)
        self._calls.discard(handle)

    def _track(self, task_id: str, handle: TaskHandle) -> None:
        self.tasks[task_id] = handle
        arrival = self._arrivals.pop(task_id, None)
        if arrival is not None and not arrival.done():
            arrival.set_result(handle)

    async def _asker(self, params: dict[str, Any]) -> TaskHandle | None:
        """The task a server request belongs to. Its question can overtake the answer to the
        creation request (a server sends both at once, on different HTTP streams): then wait for
        the creations in flight, a few seconds at most."""
        handle = self._handle_for(params)
        task_id = tasks_2025.related_task_id(params) or tasks_sep1686.related_task_id(params)
        if handle is not None or not task_id:
            return handle
        if task_id in self._ended:
            raise HandlerError(jsonrpc.INVALID_PARAMS, _ended_reason(task_id, self._ended[task_id]))
        if self._creating:
            arrival = self._arrivals.get(task_id)
            if arrival is None:
                arrival = self._arrivals[task_id] = asyncio.get_running_loop().create_future()
            try:
                return await asyncio.wait_for(asyncio.shield(arrival), CREATION_WAIT_S)
            except asyncio.TimeoutError:
                pass
            finally:
                if self._arrivals.get(task_id) is arrival and not arrival.done():
                    del self._arrivals[task_id]
        # The request names a task, and questions belong to their task: never ask anyone about one
        # this client does not know (it is another client's, or long gone).
        log.warning("%s: refused a question naming task %s, which this client does not know", self.name, task_id)
        raise HandlerError(jsonrpc.INVALID_PARAMS, f"this client knows no task {task_id!r}; the question "
                                                   f"is not answered")

    def _handle_for(self, params: dict[str, Any]) -> TaskHandle | None:
        task_id = tasks_2025.related_task_id(params) or tasks_sep1686.related_task_id(params)
        if not task_id:
            return None
        return self.tasks.get(task_id) or self.dialect.creating(task_id)

    def _on_task_status(self, params: dict[str, Any]) -> None:
        handle = self._pushed_handle(params)
        if handle is None:
            return
        try:
            state = parse_task(params, "notifications/tasks/status")
        except ValueError as exc:
            self.session.noise_received(InvalidMessage(str(exc), server=self.name))
            return
        handle._push(state)

    def _on_task_push(self, params: dict[str, Any]) -> None:
        """``notifications/tasks`` (ext): the whole task, payload included; wakes its poller."""
        handle = self._pushed_handle(params)
        if handle is None:
            return
        try:
            state = self.dialect.on_push(params)
        except ValueError as exc:
            self.session.noise_received(InvalidMessage(str(exc), server=self.name))
            return
        handle._push(state)

    def _pushed_handle(self, params: dict[str, Any]) -> TaskHandle | None:
        task_id = params.get("taskId")
        return self.tasks.get(task_id) if isinstance(task_id, str) else None

    def _on_log(self, params: dict[str, Any]) -> None:
        params = scrub_data(params)  # the server may echo a secret it was given
        handle = self._handle_for(params)
        if handle is not None:
            handle._log(params)
        else:
            self.logs.append(params)

    def _on_connection(self) -> None:
        # Reconnecting started or ended: every unfinished task's view says so.
        for handle in list(self.tasks.values()):
            handle._changed()

    def _on_lost(self, exc: MCPError) -> None:
        # Pollers notice on their next request; wake them so nobody waits a whole poll interval.
        for handle in list(self.tasks.values()):
            handle._wake.set()

    async def _on_elicit(self, params: dict[str, Any], request: Any) -> dict[str, Any]:
        """A server request (stateful wire): answered like every other question, see ``answer_elicitation``."""
        return await self.answer_elicitation(params, await self._asker(params), request.id)

    async def answer_inputs(self, requests: dict[str, dict[str, Any]],
                            handle: TaskHandle | None) -> dict[str, Any]:
        """Answer input requests (a multi round-trip request's, or an ext task's), key by key, through
        the same path as server requests. A key nothing here can answer is left out."""
        keys = list(requests)
        answers = await asyncio.gather(*(self._answer_input(key, requests[key], handle) for key in keys))
        return {key: answer for key, answer in zip(keys, answers) if answer is not None}

    async def _answer_input(self, key: str, request: dict[str, Any], handle: TaskHandle | None) -> Any:
        method = request.get("method")
        params = request.get("params") or {}
        try:
            if method == "elicitation/create":
                return await self.answer_elicitation(params, handle, key)
            if method == "sampling/createMessage":
                return await self._answer_sampling(params, handle)
            if method == "roots/list":
                return {"roots": []}
        except (HandlerError, InvalidMessage) as exc:
            log.warning("%s: could not answer %s (%s): %s", self.name, key, method, exc)
            return {"action": "cancel"} if method == "elicitation/create" else None
        except Exception:  # a handler's bug: the question is dismissed, as a form closed unanswered
            log.exception("%s: the handler for %s (%s) failed", self.name, key, method)
            return {"action": "cancel"} if method == "elicitation/create" else None
        log.warning("%s: the server asked for %r (%s), which this client cannot answer", self.name, key, method)
        return None

    async def answer_elicitation(self, params: dict[str, Any], handle: TaskHandle | None,
                                 key: Any) -> dict[str, Any]:
        """Who answers a question, in order: the connect() handler, the task's ``answers`` when they
        fit the schema, a person through ``ask_user`` (the notebook's form), else a decline.

        ``key`` names the question while it waits (``handle.pending_input``): the server request's
        id, or the input request's key."""
        parsed = self.session.validate(ElicitRequestParams, params, "elicitation/create params",
                                       "elicitation/create")
        if handle is not None and handle.done():
            raise HandlerError(jsonrpc.INVALID_PARAMS, _ended_reason(handle.task_id, handle.status))
        params = _tagged(params, handle)
        if self.elicitation_handler is None and handle is not None and handle.answers is not None:
            content = elicitation.answer_from(parsed.requested_schema, handle.answers)
            if content is not None:
                return self._answered(handle, parsed.message, "answers", {"action": "accept", "content": content})
        handler, source = ((self.elicitation_handler, "handler") if self.elicitation_handler
                           else (self.ask_user, "person") if self.ask_user else (None, "no handler"))
        if handler is None:
            return self._answered(handle, parsed.message, source, {"action": "decline"})
        if handle is not None:
            handle.pending_input[key] = {"method": "elicitation/create", "params": params}
            handle._changed()
        try:
            answer = await handler(params)
        finally:
            if handle is not None:
                handle.pending_input.pop(key, None)
        if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
            raise HandlerError(-32603, "the elicitation handler returned no valid answer "
                                       "(need {'action': 'accept'|'decline'|'cancel', ...})")
        return self._answered(handle, parsed.message, source, answer)

    @staticmethod
    def _answered(handle: TaskHandle | None, message: str, source: str,
                  answer: dict[str, Any] | str) -> Any:
        if handle is not None:
            handle.answered.append((message, source, answer if isinstance(answer, str) else answer["action"]))
            handle._changed()
        return answer

    async def _on_sampling(self, params: dict[str, Any], request: Any) -> dict[str, Any]:
        return await self._answer_sampling(params, await self._asker(params))

    async def _answer_sampling(self, params: dict[str, Any], handle: TaskHandle | None) -> dict[str, Any]:
        self.session.validate(CreateMessageRequestParams, params, "sampling/createMessage params",
                              "sampling/createMessage")
        if handle is not None and handle.done():
            raise HandlerError(jsonrpc.INVALID_PARAMS, _ended_reason(handle.task_id, handle.status))
        params = _tagged(params, handle)
        if self.sampling_handler is None:
            self._answered(handle, "the server asked for a model (sampling)", "no handler", "decline")
            raise HandlerError(-1, "this client has no model to sample from (no sampling_handler)")
        answer = await self.sampling_handler(params)
        self._answered(handle, "the server asked for a model (sampling)", "handler", "accept")
        return answer

    # -- closing -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop polling and close the connection. Tasks keep running on the server."""
        if self._closed:
            return
        self._closed = True
        runners = [h._runner for h in [*self.tasks.values(), *self._calls] if h._runner]
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)
        await self.session.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _transport_for(target: str | Sequence[str], headers: dict[str, str] | None,
                   env: dict[str, str] | None) -> Transport:
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        if env:
            raise UsageError("env= applies to stdio servers; this target is a URL")
        return StreamableHTTPTransport(target, headers=headers)
    if headers:
        raise UsageError("headers= apply to HTTP servers; this target is a command")
    if not isinstance(target, (str, list, tuple)):
        raise UsageError(f"target must be a URL, a command string or a list of argv strings, "
                         f"not {type(target).__name__}")
    return StdioTransport(target, env=env)


def _client_capabilities(sampling: bool) -> dict[str, Any]:
    # Elicitation is always offered: questions are answered by the handler, by a task's `answers`,
    # or declined at once, so a server that asks never waits on nobody.
    caps: dict[str, Any] = {"tasks": {"requests": {}}, "elicitation": {"form": {}}}
    if sampling:
        caps["sampling"] = {}
    return caps


async def open_client(target: str | Sequence[str], *, headers: dict[str, str] | None = None,
                      env: dict[str, str] | None = None, dialect: str = "auto",
                      elicitation_handler: Handler | None = None,
                      sampling_handler: Handler | None = None, name: str | None = None,
                      timeout: float = 30.0, protocol_version: str | None = None,
                      index: TaskIndex | str | os.PathLike[str] | None = None,
                      reconnect_for: float = RECONNECT_FOR_S) -> Client:
    check_dialect(dialect)
    check_version(protocol_version)
    transport = _transport_for(target, headers, env)
    if not reconnect_for >= 0:
        raise UsageError(f"reconnect_for must be a number of seconds >= 0, not {reconnect_for!r}")
    session = Session(transport, name=name,
                      capabilities=_client_capabilities(sampling_handler is not None))
    session.reconnect_for = float(reconnect_for)
    # A dialect that lives on one wire decides it; otherwise the handshake finds out.
    stateless = True if dialect in STATELESS else False if dialect in STATEFUL else None
    try:
        await session.start()
        async with asyncio.timeout(timeout):
            await handshake(session, protocol_version, stateless=stateless,
                            probe_timeout=min(PROBE_TIMEOUT_S, timeout))
        if name is None and session.server_info is not None:
            session.name = scrub(f"{session.server_info.name} at {transport.label}")
        chosen = select_dialect(dialect, session)
    except TimeoutError:
        await session.close()
        raise ConnectionFailed(f"no answer to the handshake (server/discover or initialize) within {timeout} s",
                               server=session.name) from None
    except BaseException:
        await session.close()
        raise
    client = Client(session, chosen, elicitation_handler=elicitation_handler,
                    sampling_handler=sampling_handler)
    if index is not None:
        client.index = index if isinstance(index, TaskIndex) else TaskIndex(index)
    return client


class Connecting:
    """What ``connect`` returns: await it for a Client, or use it as ``async with``."""

    def __init__(self, target: str | Sequence[str], **options: Any) -> None:
        self._target = target
        self._options = options
        self._client: Client | None = None

    def __await__(self) -> Generator[Any, None, Client]:
        return open_client(self._target, **self._options).__await__()

    async def __aenter__(self) -> Client:
        self._client = await open_client(self._target, **self._options)
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()


def connect(target: str | Sequence[str], *, headers: dict[str, str] | None = None,
            env: dict[str, str] | None = None, dialect: str = "auto",
            elicitation_handler: Handler | None = None, sampling_handler: Handler | None = None,
            name: str | None = None, timeout: float = 30.0,
            protocol_version: str | None = None,
            index: TaskIndex | str | os.PathLike[str] | None = None,
            reconnect_for: float = RECONNECT_FOR_S) -> Connecting:
    """Connect to an MCP server.

    ``target``: an ``http(s)://`` URL (Streamable HTTP), or a command string / argv list (stdio).
    ``headers`` go on every HTTP request (tokens); ``env`` is added to a stdio server's environment.
    ``dialect``: how tasks are spoken: ``auto`` (default: the newest both sides support, see
    ``client.describe()["dialect_reason"]``), ``ext`` (the 2026-07-28 tasks extension),
    ``2025-11-25``, ``sep1686`` (the SEP-1686 draft) or ``none`` (ordinary calls only).
    ``protocol_version``: None (default) probes with ``server/discover`` and falls back to
    ``initialize``; ``"2026-07-28"`` speaks only the stateless wire; a legacy version
    (``"2025-11-25"``, ...) only ``initialize``.
    Handlers are ``async def handler(params: dict) -> dict`` returning the MCP result.
    ``index``: a :class:`~mcp_tasks_jupyter.index.TaskIndex` (or its path) recording every task
    started (for ``client.resume()`` and ``start_task(..., cache=True)``); the notebook runtime
    gives every connection the default one.
    ``reconnect_for``: how long (seconds) an HTTP server that went away is reconnected, with backoff,
    before its unfinished tasks end ``lost``; a server that ended the session (HTTP 404) gets a new one.
    """
    return Connecting(target, headers=headers, env=env, dialect=dialect,
                      elicitation_handler=elicitation_handler, sampling_handler=sampling_handler,
                      name=name, timeout=timeout, protocol_version=protocol_version, index=index,
                      reconnect_for=reconnect_for)


def _ended_reason(task_id: str | None, status: str) -> str:
    return f"task {task_id!r} has already ended ({status}); its question is not answered"


def _settle(future: "asyncio.Future[BaseException | None]", value: BaseException | None) -> None:
    if not future.done():
        future.set_result(value)


def _tagged(params: dict[str, Any], handle: TaskHandle | None) -> dict[str, Any]:
    """A question's params tagged with its task as the 2025-11-25 wire tags them
    (``_meta["io.modelcontextprotocol/related-task"]``), whatever the dialect: handlers (the
    notebook's among them) find the task that asks the same way everywhere."""
    if handle is None or not handle.task_id or tasks_2025.related_task_id(params) is not None:
        return params
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    return {**params, "_meta": {**meta, tasks_2025.RELATED_TASK: {"taskId": handle.task_id}}}
