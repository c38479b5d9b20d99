"""Client: one connected MCP server, its tools, and the tasks started on it."""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
from typing import Any, Awaitable, Callable, Generator, Sequence

from . import elicitation
from .dialects import select_dialect
from .dialects.base import TaskDialect
from .errors import (ConnectionFailed, InvalidMessage, MCPError, ToolNotFound, UsageError)
from .protocol import tasks_2025
from .protocol.tasks import TaskState, parse_task
from .protocol.types import (CreateMessageRequestParams, ElicitRequestParams, ListToolsResult, Tool)
from .results import ToolResult
from .session import HandlerError, Session
from .tasks import MAX_POLL_FAILURES, TaskHandle
from .transport import StdioTransport, StreamableHTTPTransport, Transport

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

DEFAULT_CALL_TIMEOUT_S = 600.0
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
        init = session.initialize_result
        assert init is not None
        self.server_info = init.server_info
        self.protocol_version = init.protocol_version
        self.capabilities = init.capabilities
        self.instructions = init.instructions
        #: Every unfinished task this client started or attached to (strong references).
        self.tasks: dict[str, TaskHandle] = {}
        #: Unfinished ordinary calls running behind handles.
        self._calls: set[TaskHandle] = set()
        self.logs: collections.deque[dict[str, Any]] = collections.deque(maxlen=500)
        self._tools: dict[str, Tool] | None = None
        self._closed = False
        #: Failed polls in a row (with backoff between them) before a task is declared lost.
        self.max_poll_failures = MAX_POLL_FAILURES
        session.notification_handlers[tasks_2025.STATUS_NOTIFICATION] = self._on_task_status
        session.notification_handlers["notifications/message"] = self._on_log
        session.request_handlers["elicitation/create"] = self._on_elicit
        session.request_handlers["sampling/createMessage"] = self._on_sampling
        session.on_lost.append(self._on_lost)

    @property
    def name(self) -> str:
        """The server's name as used in messages and errors."""
        return self.session.name

    @property
    def transport(self) -> Transport:
        return self.session.transport

    def describe(self) -> dict[str, Any]:
        """What this connection is: transport, protocol, dialect (and why), task capabilities."""
        return {**self.transport.describe(), "server": self.server_info.name,
                "version": self.server_info.version, "protocol": self.protocol_version,
                "dialect": self.dialect.name, "dialect_reason": self.dialect.reason,
                "tasks": self.capabilities.get("tasks"), "open_tasks": len(self.tasks)}

    # -- tools ---------------------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> list[Tool]:
        """Every tool the server offers (all pages), cached after the first call."""
        if self._tools is None or refresh:
            tools: dict[str, Tool] = {}
            cursor: str | None = None
            seen: set[str] = set()
            while True:
                raw = await self.session.request("tools/list", {"cursor": cursor} if cursor else {})
                page = self.session.validate(ListToolsResult, raw, "tools/list result", "tools/list")
                tools.update((t.name, t) for t in page.tools)
                cursor = page.next_cursor
                if not cursor or cursor in seen:
                    break
                seen.add(cursor)
            self._tools = tools
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
                         ttl: int | None = None, answers: dict[str, Any] | None = None) -> TaskHandle:
        """Start ``tool`` as a task and return its handle as soon as the server has accepted it.

        ``ttl`` is the retention asked for, in milliseconds (the server may change it). A tool that
        cannot run as a task here runs as an ordinary call in the background; ``handle.runs_as_task``
        is then False. ``answers`` answer the task's questions (elicitations) without asking anyone,
        whenever they satisfy the question's schema (defaults fill the gaps); otherwise the
        elicitation handler is asked. An ``elicitation_handler`` given to ``connect`` decides first.
        """
        self._check_open()
        if arguments is not None and not isinstance(arguments, dict):
            raise UsageError(f"arguments for {tool!r} must be a mapping, not {type(arguments).__name__}",
                             server=self.name)
        args = dict(arguments or {})
        spec = await self.tool(tool)
        self._check_arguments(spec, args)
        token = f"mtj-{next(_token_counter)}"
        as_task = self.dialect.runs_as_task(spec)
        handle = TaskHandle(self, tool, args, runs_as_task=as_task, progress_token=token)
        handle.answers = dict(answers) if answers else None
        self.session.add_progress_listener(token, handle._on_progress)
        if not as_task:
            self._calls.add(handle)
            handle._start(handle._run_call(self._plain_call(tool, args, token, timeout=None)))
            return handle
        try:
            created = await self.dialect.create(spec, args, ttl_ms=ttl, progress_token=token)
        except BaseException:
            self.session.remove_progress_listener(token)
            raise
        if isinstance(created, ToolResult):
            self._calls.add(handle)
            handle.runs_as_task = False
            handle._finish(created)
            return handle
        handle._apply(created)
        self.tasks[created.task_id] = handle
        handle._start(handle._poll(self.dialect))
        return handle

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

    async def call_tool(self, tool: str, arguments: dict[str, Any] | None = None, *,
                        timeout: float | None = DEFAULT_CALL_TIMEOUT_S) -> ToolResult:
        """Call a tool and wait for its result; runs as a task when the tool requires one."""
        self._check_open()
        args = dict(arguments or {})
        spec = await self.tool(tool)
        if self.dialect.requires_task(spec) and self.dialect.runs_as_task(spec):
            handle = await self.start_task(tool, args)
            async with asyncio.timeout(timeout):
                return await handle
        return await self._plain_call(tool, args, None, timeout=timeout)

    async def _plain_call(self, tool: str, args: dict[str, Any], token: str | None, *,
                          timeout: float | None) -> ToolResult:
        params: dict[str, Any] = {"name": tool, "arguments": args}
        if token is not None:
            params["_meta"] = {"progressToken": token}
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
            self.session.withdraw_serving(request_id)  # a finished task's question is stale
        if handle.task_id is not None:
            self.tasks.pop(handle.task_id, None)
        self._calls.discard(handle)

    def _handle_for(self, params: dict[str, Any]) -> TaskHandle | None:
        task_id = tasks_2025.related_task_id(params)
        return self.tasks.get(task_id) if task_id else None

    def _on_task_status(self, params: dict[str, Any]) -> None:
        handle = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
        if handle is None:
            return
        try:
            state = parse_task(params, "notifications/tasks/status")
        except ValueError as exc:
            self.session.noise_received(InvalidMessage(str(exc), server=self.name))
            return
        handle._push(state)

    def _on_log(self, params: dict[str, Any]) -> None:
        handle = self._handle_for(params)
        if handle is not None:
            handle._log(params)
        else:
            self.logs.append(params)

    def _on_lost(self, exc: MCPError) -> None:
        # Pollers notice on their next request; wake them so nobody waits a whole poll interval.
        for handle in list(self.tasks.values()):
            handle._wake.set()

    async def _on_elicit(self, params: dict[str, Any], request: Any) -> dict[str, Any]:
        """Who answers a question, in order: the connect() handler, the task's ``answers`` when they
        fit the schema, a person through ``ask_user`` (the notebook's form), else a decline."""
        parsed = self.session.validate(ElicitRequestParams, params, "elicitation/create params",
                                       "elicitation/create")
        handle = self._handle_for(params)
        if self.elicitation_handler is None and handle is not None and handle.answers is not None:
            content = elicitation.answer_from(parsed.requested_schema, handle.answers)
            if content is not None:
                return self._answered(handle, parsed.message, "answers", {"action": "accept", "content": content})
        handler, source = ((self.elicitation_handler, "handler") if self.elicitation_handler
                           else (self.ask_user, "person") if self.ask_user else (None, "no handler"))
        if handler is None:
            return self._answered(handle, parsed.message, source, {"action": "decline"})
        if handle is not None:
            handle.pending_input[request.id] = {"method": "elicitation/create", "params": params}
            handle._changed()
        try:
            answer = await handler(params)
        finally:
            if handle is not None:
                handle.pending_input.pop(request.id, None)
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
        self.session.validate(CreateMessageRequestParams, params, "sampling/createMessage params",
                              "sampling/createMessage")
        handle = self._handle_for(params)
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
                      timeout: float = 30.0) -> Client:
    transport = _transport_for(target, headers, env)
    session = Session(transport, name=name,
                      capabilities=_client_capabilities(sampling_handler is not None))
    try:
        await session.start()
        async with asyncio.timeout(timeout):
            init = await session.initialize()
        if name is None:
            session.name = f"{init.server_info.name} at {transport.label}"
        chosen = select_dialect(dialect, session)
    except TimeoutError:
        await session.close()
        raise ConnectionFailed(f"no answer to initialize within {timeout} s", server=session.name) from None
    except BaseException:
        await session.close()
        raise
    return Client(session, chosen, elicitation_handler=elicitation_handler,
                  sampling_handler=sampling_handler)


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
            name: str | None = None, timeout: float = 30.0) -> Connecting:
    """Connect to an MCP server.

    ``target``: an ``http(s)://`` URL (Streamable HTTP), or a command string / argv list (stdio).
    ``headers`` go on every HTTP request (tokens); ``env`` is added to a stdio server's environment.
    ``dialect``: ``auto`` (default) or one of ``2025-11-25``, ``none``.
    Handlers are ``async def handler(params: dict) -> dict`` returning the MCP result.
    """
    return Connecting(target, headers=headers, env=env, dialect=dialect,
                      elicitation_handler=elicitation_handler, sampling_handler=sampling_handler,
                      name=name, timeout=timeout)
