"""The 2025-11-25 dialect: message dispatch for one client session (experimental core tasks).

:class:`Session2025` takes decoded JSON-RPC messages from a transport and returns the response
to each request; everything it sends on its own (notifications, ``elicitation/create``
requests) goes through the transport's :class:`~.jsonrpc.Outbound`. It implements
``initialize``, ``ping``, ``logging/setLevel``, ``tools/list``, ``tools/call`` (inline or
task-augmented), ``tasks/get``, ``tasks/result``, ``tasks/cancel`` and ``tasks/list``.

Dialect rules that live here and nowhere else: the wire shape of a Task, the
``io.modelcontextprotocol/related-task`` metadata, ``execution.taskSupport`` and its -32601
errors, and "a tool result with ``isError: true`` makes the task ``failed``".

The sep1686 dialect (:mod:`.protocol_sep1686`) shares this session plumbing (initialize, tool
calls with server-to-client requests, logging) and overrides the task rules; a session can turn
into a sep1686 session in place (:meth:`Session2025.become`) when its client turns out to speak
sep1686.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

from . import app_tools
from .options import DemoConfig
from .pagination import InvalidCursor, decode_cursor, encode_cursor
from .rpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    ClientError,
    Outbound,
    OutgoingRequests,
    RpcError,
    SessionClosed,
    is_valid_id,
    make_error,
    make_notification,
    make_response,
    message_kind,
)
from .task_store import (
    InputRequest,
    TaskAlreadyTerminal,
    TaskExpired,
    TaskNotFound,
    TaskRecord,
    TaskStore,
    isoformat_utc,
)
from .tools import ElicitationFailed, Tool
from .validation import ArgumentError, validate_arguments

logger = logging.getLogger("mcp_tasks_jupyter.demo")

LATEST_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
RELATED_TASK = "io.modelcontextprotocol/related-task"
IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response"
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
SERVER_NAME = "mcp-tasks-jupyter-demo"

INSTRUCTIONS = (
    "Demo server for MCP tasks. slow_compute, failing_job and make_chart may run as tasks; "
    "research must run as a task and may ask a question (elicitation); echo never runs as a task."
)


def task_to_wire(task: TaskRecord) -> dict[str, Any]:
    """The 2025-11-25 ``Task`` object."""
    wire: dict[str, Any] = {"taskId": task.task_id, "status": task.status}
    if task.status_message is not None:
        wire["statusMessage"] = task.status_message
    wire.update(
        createdAt=isoformat_utc(task.created_at),
        lastUpdatedAt=isoformat_utc(task.last_updated_at),
        ttl=task.ttl_ms,
        pollInterval=task.poll_interval_ms,
    )
    return wire


def tool_to_wire(tool: Tool) -> dict[str, Any]:
    """The 2025-11-25 ``tools/list`` entry (``execution.taskSupport`` where the tool says)."""
    entry = tool.definition()
    if tool.task_support is not None:
        entry["execution"] = {"taskSupport": tool.task_support}
    return entry


def related(task_id: str) -> dict[str, Any]:
    """The ``_meta`` that ties a message to a task."""
    return {RELATED_TASK: {"taskId": task_id}}


def _client_error(error: Any) -> ClientError:
    error = error if isinstance(error, dict) else {}
    return ClientError(error.get("code", INTERNAL_ERROR), str(error.get("message", "error")), error.get("data"))


def first_text(result: dict[str, Any]) -> str | None:
    """The first text block of a CallToolResult, cut to one line of at most 200 characters."""
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"].strip()
            line = text.splitlines()[0].lstrip("#").strip() if text else ""
            return line[:200]
    return None


class CallContext:
    """The :class:`~.tools.ToolContext` of one tool call, inline (``task`` None) or as a task."""

    def __init__(self, session: Session2025, task: TaskRecord | None, progress_token: Any) -> None:
        self._session = session
        self._task = task
        self._progress_token = progress_token

    @property
    def can_elicit(self) -> bool:
        return self._session.client_can_elicit

    def _meta(self) -> dict[str, Any] | None:
        return self._session.related(self._task.task_id) if self._task is not None else None

    def _task_id(self) -> str | None:
        return self._task.task_id if self._task is not None else None

    def report(self, message: str, progress: float | None = None, total: float | None = None) -> None:
        if self._task is not None:
            self._session.store.update(self._task, message=message)
        if self._progress_token is not None and progress is not None:
            params: dict[str, Any] = {
                "progressToken": self._progress_token,
                "progress": progress,
                "message": message,
            }
            if total is not None:
                params["total"] = total
            meta = self._meta()
            if meta:
                params["_meta"] = meta
            self._session.send(make_notification("notifications/progress", params), task_id=self._task_id())

    def log(self, text: str) -> None:
        self._session.log("info", text, task_id=self._task_id())

    async def elicit(self, message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
        task = self._task
        params: dict[str, Any] = {"message": message, "requestedSchema": requested_schema}
        try:
            if task is None:
                answer = await self._session.request("elicitation/create", params)
            else:
                answer = await self._ask_for_task(task, params, message)
        except ClientError as exc:
            raise ElicitationFailed(exc.message) from None
        if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
            raise ElicitationFailed("the client sent an invalid elicitation result")
        return answer

    async def _ask_for_task(self, task: TaskRecord, params: dict[str, Any], message: str) -> Any:
        params["_meta"] = self._session.related(task.task_id)
        store = self._session.store
        question = store.add_input(task, "elicitation/create", params, f"input required: {message}")
        self._session.ask(task, question)
        try:
            return await question.answer
        finally:
            if question.withdraw is not None:
                question.withdraw()
            store.remove_input(task, question, "input received, continuing")

    async def background(self) -> None:
        return None  # the client decided up front whether this call is a task


class Session2025:
    """One client session speaking the 2025-11-25 protocol.

    ``handle`` may be called concurrently (one call per incoming message); it returns the
    response for a request and None for notifications and responses.
    """

    dialect: ClassVar[str] = "2025-11-25"
    METHODS: ClassVar[dict[str, str]] = {
        "initialize": "_initialize",
        "ping": "_ping",
        "logging/setLevel": "_set_level",
        "tools/list": "_tools_list",
        "tools/call": "_tools_call",
        "resources/list": "_resources_list",
        "resources/read": "_resources_read",
        "tasks/get": "_tasks_get",
        "tasks/result": "_tasks_result",
        "tasks/cancel": "_tasks_cancel",
        "tasks/list": "_tasks_list",
    }

    def __init__(
        self,
        *,
        config: DemoConfig,
        store: TaskStore,
        tools: dict[str, Tool],
        server_version: str,
        outbound: Outbound,
    ) -> None:
        self.config = config
        self.store = store
        self._tools = tools
        self._tool_list = list(tools.values())
        self._server_version = server_version
        self._outbound = outbound
        self._requests = OutgoingRequests()
        self._inflight: dict[Any, asyncio.Task[Any]] = {}
        self._cancelled_by_client: set[Any] = set()
        self._log_threshold = 0
        self._closed = False
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}

    def become(self, cls: type[Session2025]) -> None:
        """Turn this live session into one of a sibling dialect (a subclass sharing this state),
        in place, so every reference to it (transport, task listeners, requests in flight) stays
        valid. The dialect rules of requests already being handled do not change."""
        if type(self) is not cls:
            logger.info("session switches from %s to %s", self.dialect, cls.dialect)
            self.__class__ = cls

    def related(self, task_id: str) -> dict[str, Any]:
        """The ``_meta`` that ties a message to a task, in this dialect."""
        return related(task_id)

    def response_stream_task(self, message: dict[str, Any]) -> str | None:
        """For HTTP: the task whose messages should travel on this request's own SSE response
        (``tasks/result`` here), or None for a plain JSON answer."""
        if message.get("method") != "tasks/result":
            return None
        params = message.get("params")
        task_id = params.get("taskId") if isinstance(params, dict) else None
        return task_id if isinstance(task_id, str) else ""

    # -- plumbing ----------------------------------------------------------------------------

    @property
    def client_can_elicit(self) -> bool:
        """The client declared ``capabilities.elicitation`` with form mode (the default)."""
        elicitation = self.client_capabilities.get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        return not elicitation or "form" in elicitation

    def send(self, message: dict[str, Any], *, task_id: str | None = None) -> None:
        """Send a message to the client unless the session has ended."""
        if not self._closed:
            self._outbound.send(message, task_id=task_id)

    def log(self, level: str, text: str, *, task_id: str | None = None) -> None:
        """A ``notifications/message`` from logger "demo", if the client's level lets it through."""
        if LOG_LEVELS.index(level) < self._log_threshold:
            return
        params: dict[str, Any] = {"level": level, "logger": "demo", "data": text}
        if task_id is not None:
            params["_meta"] = self.related(task_id)
        self.send(make_notification("notifications/message", params), task_id=task_id)

    async def request(self, method: str, params: dict[str, Any], *, task_id: str | None = None) -> Any:
        """Send a request to the client and wait for its result; :class:`ClientError` on an error."""
        message, future = self._requests.new(method, params)
        self.send(message, task_id=task_id)
        try:
            answer = await future
        finally:
            self._requests.forget(message["id"])
        if "error" in answer:
            raise _client_error(answer["error"])
        return answer.get("result")

    def ask(self, task: TaskRecord, question: InputRequest) -> bool:
        """Ask a task's pending question through this session, retracting any earlier ask
        (through this or another session). False if it cannot be asked here."""
        if question.answer.done():
            return False
        try:
            message, future = self._requests.new(question.method, question.params)
        except ClientError:
            return False  # this session has ended
        if question.withdraw is not None:
            question.withdraw()
        msg_id = message["id"]

        def settle(done: asyncio.Future[dict[str, Any]]) -> None:
            if done.cancelled() or question.answer.done():
                return
            exc = done.exception()
            if isinstance(exc, SessionClosed):
                return  # the question stays open: another session may ask it again
            if exc is not None:
                question.answer.set_exception(exc)
            elif "error" in done.result():
                question.answer.set_exception(_client_error(done.result()["error"]))
            else:
                question.answer.set_result(done.result().get("result"))

        future.add_done_callback(settle)
        question.asked_via = self
        question.withdraw = lambda: self._requests.forget(msg_id)
        self.send(message, task_id=task.task_id)
        return True

    def is_waiting_for(self, request_id: Any) -> bool:
        """True while a request this session sent still wants its answer."""
        return self._requests.is_waiting(request_id)

    def close(self) -> None:
        """End the session: task notifications stop, inline calls waiting for an answer fail,
        and a task's question asked here stays open for another session to ask again (the
        tasks themselves go on in the shared store). Requests still being handled belong to
        the transport, which decides whether to cancel them."""
        if self._closed:
            return
        self._closed = True
        self._requests.close("the client session ended before answering")

    # -- incoming ----------------------------------------------------------------------------

    async def handle(self, message: Any) -> dict[str, Any] | None:
        """Process one incoming message; the response to send back, or None."""
        kind = message_kind(message)
        if kind == "response":
            if not self._requests.resolve(message):
                logger.info("ignoring a response to unknown request %r", message.get("id"))
            return None
        if kind == "notification":
            self._notification(message["method"], message.get("params"))
            return None
        if kind == "invalid":
            msg_id = message.get("id") if isinstance(message, dict) and is_valid_id(message.get("id")) else None
            return make_error(
                msg_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
            )

        msg_id, method = message["id"], message["method"]
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return make_error(msg_id, INVALID_PARAMS, "params must be an object")
        handler_name = self.METHODS.get(method)
        if handler_name is None:
            return make_error(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        handler = getattr(self, handler_name)
        current = asyncio.current_task()
        if current is not None:
            self._inflight[msg_id] = current
        try:
            return make_response(msg_id, await handler(params))
        except RpcError as exc:
            return {"jsonrpc": "2.0", "id": msg_id, "error": exc.to_error()}
        except asyncio.CancelledError:
            if msg_id in self._cancelled_by_client and current is not None and current.cancelling() == 1:
                current.uncancel()
                return None  # the client cancelled: no response (transports may say otherwise)
            raise
        except Exception as exc:
            logger.exception("%s failed", method)
            return make_error(msg_id, INTERNAL_ERROR, f"Internal error: {exc}")
        finally:
            if self._inflight.get(msg_id) is current:
                del self._inflight[msg_id]
            self._cancelled_by_client.discard(msg_id)

    def _notification(self, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            task = self._inflight.get(request_id) if is_valid_id(request_id) else None
            if task is not None:
                logger.info("client cancelled request %r", request_id)
                self._cancelled_by_client.add(request_id)
                task.cancel()
        # notifications/initialized and anything else: nothing to do

    # -- lifecycle and utilities -------------------------------------------------------------

    async def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        self.protocol_version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        capabilities = params.get("capabilities")
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else {}
        logger.info(
            "client %s %s initialized with %s (elicitation: %s)",
            self.client_info.get("name"),
            self.client_info.get("version"),
            self.protocol_version,
            self.client_can_elicit,
        )
        return {
            "protocolVersion": self.protocol_version,
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {},
                "logging": {},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {"name": SERVER_NAME, "title": "MCP tasks demo server", "version": self._server_version},
            "instructions": INSTRUCTIONS,
        }

    async def _ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def _resources_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return app_tools.list_resources()

    async def _resources_read(self, params: dict[str, Any]) -> dict[str, Any]:
        found = app_tools.read_resource(params.get("uri"))
        if found is None:
            raise RpcError(app_tools.RESOURCE_NOT_FOUND, f"Resource not found: {params.get('uri')!r}")
        return found

    async def _set_level(self, params: dict[str, Any]) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(
                INVALID_PARAMS, f"Invalid log level: {level!r}; expected one of {', '.join(LOG_LEVELS)}"
            )
        self._log_threshold = LOG_LEVELS.index(level)
        return {}

    # -- tools -------------------------------------------------------------------------------

    async def _tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        try:
            start = 0 if cursor is None else decode_cursor("tools", cursor)
        except InvalidCursor:
            raise RpcError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from None
        end = start + self.config.tools_page_size
        apps = app_tools.declares_apps(self.client_capabilities)
        result: dict[str, Any] = {
            "tools": [app_tools.for_client(tool_to_wire(tool), apps) for tool in self._tool_list[start:end]]
        }
        if end < len(self._tool_list):
            result["nextCursor"] = encode_cursor("tools", end)
        return result

    def _find_tool(self, params: dict[str, Any]) -> Tool:
        name = params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        return tool

    @staticmethod
    def _arguments(tool: Tool, params: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """The checked arguments (defaults filled in) and the progress token of a call."""
        try:
            arguments = validate_arguments(tool.input_schema, params.get("arguments"))
        except ArgumentError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid arguments for tool '{tool.name}': {exc}") from None
        meta = params.get("_meta")
        return arguments, meta.get("progressToken") if isinstance(meta, dict) else None

    async def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        tool = self._find_tool(params)
        name = tool.name
        task_params = params.get("task")
        if task_params is not None:
            if not tool.allows_task:
                raise RpcError(
                    METHOD_NOT_FOUND,
                    f"Tool '{name}' does not support task augmentation (execution.taskSupport is forbidden)",
                )
            if not isinstance(task_params, dict):
                raise RpcError(INVALID_PARAMS, "params.task must be an object")
            ttl = task_params.get("ttl")
            if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl < 0):
                raise RpcError(
                    INVALID_PARAMS, "params.task.ttl must be a non-negative number of milliseconds or null"
                )
        elif tool.task_support == "required":
            raise RpcError(METHOD_NOT_FOUND, f"Tool '{name}' requires task augmentation: call it with params.task")
        arguments, progress_token = self._arguments(tool, params)

        if task_params is None:
            return await tool.body(arguments, CallContext(self, None, progress_token))

        task = self.store.create(
            tool_name=tool.name,
            ttl_ms=self.config.clamp_ttl(task_params.get("ttl")),
            poll_interval_ms=self.config.poll_interval_ms,
            status_message=f"{tool.name} started",
            dialect=self.dialect,
        )
        if self.config.status_notifications:
            task.listeners.append(self._task_changed)
        self.store.start(task, self._run_task(tool, arguments, CallContext(self, task, progress_token), task))
        return {
            "task": task_to_wire(task),
            "_meta": {
                IMMEDIATE_RESPONSE: f"{tool.name} is running as task {task.task_id}; its result comes later."
            },
        }

    async def _run_task(self, tool: Tool, arguments: dict[str, Any], ctx: CallContext, task: TaskRecord) -> None:
        """The background body of a task: run the tool, record the outcome (2025-11-25 rules)."""
        try:
            result = await tool.body(arguments, ctx)
        except RpcError as exc:
            self.store.finish(task, "failed", exc.message, error=exc.to_error())
        except Exception as exc:
            logger.exception("tool %s crashed in task %s", tool.name, task.task_id)
            error = RpcError(INTERNAL_ERROR, f"Internal error: {exc}")
            self.store.finish(task, "failed", error.message, error=error.to_error())
        else:
            if result.get("isError"):
                self.store.finish(
                    task, "failed", first_text(result) or "the tool reported an error", result=result
                )
            else:
                self.store.finish(task, "completed", first_text(result) or "completed", result=result)

    def _task_changed(self, task: TaskRecord) -> None:
        self.send(make_notification("notifications/tasks/status", task_to_wire(task)), task_id=task.task_id)

    # -- tasks -------------------------------------------------------------------------------

    def _lookup(self, params: dict[str, Any]) -> TaskRecord:
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise RpcError(INVALID_PARAMS, "params.taskId must be a string")
        try:
            return self.store.get(task_id, self.dialect)
        except TaskExpired:
            raise RpcError(INVALID_PARAMS, f"Task has expired: {task_id}") from None
        except TaskNotFound:
            raise RpcError(INVALID_PARAMS, f"Task not found: {task_id}") from None

    async def _tasks_get(self, params: dict[str, Any]) -> dict[str, Any]:
        return task_to_wire(self._lookup(params))

    async def _tasks_result(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._lookup(params)
        for question in list(task.input_requests.values()):
            if question.asked_via is not self and self.client_can_elicit:
                self.ask(task, question)  # e.g. a client that reconnected after a kernel restart
        await task.done.wait()
        task = self._lookup(params)  # it may have expired while we waited
        if task.status == "cancelled":
            raise RpcError(REQUEST_CANCELLED, "Task was cancelled", {"taskId": task.task_id})
        if task.error is not None:
            raise RpcError.from_error(task.error)
        result = dict(task.result or {})
        result["_meta"] = {**(result.get("_meta") or {}), **related(task.task_id)}
        return result

    async def _tasks_cancel(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._lookup(params)
        try:
            self.store.cancel(task)
        except TaskAlreadyTerminal as exc:
            raise RpcError(
                INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{exc.status}'"
            ) from None
        return task_to_wire(task)

    def listed_task(self, task: TaskRecord) -> dict[str, Any]:
        """A task as ``tasks/list`` shows it (the dialect's Task object)."""
        return task_to_wire(task)

    async def _tasks_list(self, params: dict[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        try:
            page, next_cursor = self.store.list_page(cursor, self.config.tasks_page_size, self.dialect)
        except InvalidCursor:
            raise RpcError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from None
        result: dict[str, Any] = {"tasks": [self.listed_task(task) for task in page]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result
