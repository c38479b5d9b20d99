"""The stateless 2026-07-28 protocol: every request stands alone (the base of the ext dialect).

No ``initialize`` and no session: each request carries ``params._meta`` with
``io.modelcontextprotocol/protocolVersion`` (required), ``.../clientCapabilities`` (required) and
``.../clientInfo``; capabilities are judged per request. :class:`Stateless2026` answers
``server/discover``, ``ping``, ``tools/list``, ``tools/call`` and ``subscriptions/listen``, plus
whatever methods its extension adds (:mod:`.protocol_ext`: ``tasks/get``, ``tasks/update``,
``tasks/cancel``). Anything else is -32601 (HTTP 404), ``tasks/result`` and ``tasks/list`` included.

Rules that live here and nowhere else:

* Every result has ``resultType`` ("complete", or "input_required" for a question, or the
  extension's "task").
* ``_meta`` without the version or the capabilities: -32602 (HTTP 400). A version other than
  2026-07-28: -32022 with ``data: {supported: ["2026-07-28"], requested}`` (HTTP 400); the
  legacy versions (2025-11-25, 2025-06-18, 2025-03-26) are served after ``initialize`` instead.
* Over HTTP (:meth:`Stateless2026.precheck` with the headers): ``MCP-Protocol-Version`` must be
  present and equal the ``_meta`` version; ``Mcp-Method`` must equal the method; ``Mcp-Name``
  must equal ``params.name`` (``tools/call``, ``prompts/get``), ``params.uri``
  (``resources/read``) or ``params.taskId`` (``tasks/get``, ``tasks/update``, ``tasks/cancel``),
  Base64 sentinel ``=?base64?...?=`` decoded. A missing or disagreeing header: -32020 (HTTP 400).
* A tool's question during a request is a multi round-trip request (:mod:`.mrtr`); a question
  the client cannot answer (no ``elicitation`` capability) is -32021 with
  ``data.requiredCapabilities``.
* ``notifications/progress`` (with ``_meta.progressToken``) and ``notifications/message`` (with
  ``_meta["io.modelcontextprotocol/logLevel"]``) travel only with their own request: on stdio
  as lines before the response, over HTTP on that request's SSE response.
* ``subscriptions/listen {notifications: {...}}``: the response is a stream that starts with
  ``notifications/subscriptions/acknowledged {notifications: <what is honoured>}`` and carries
  the notifications asked for, each with ``_meta["io.modelcontextprotocol/subscriptionId"]`` =
  the listen request's id; it ends when the client cancels (stdio: ``notifications/cancelled``;
  HTTP: closing the stream) or, at shutdown, with ``{resultType: "complete", _meta:
  {subscriptionId}}``. The only filter key honoured is the extension's ``taskIds``.
* ``server/discover`` and ``tools/list`` are cacheable: ``ttlMs`` 60000, ``cacheScope`` public.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from . import app_tools
from .mrtr import InputRequired, Round, StateCodec
from .options import DemoConfig
from .pagination import InvalidCursor, decode_cursor, encode_cursor
from .protocol_2025 import INSTRUCTIONS, LOG_LEVELS, SERVER_NAME
from .rpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    RpcError,
    is_valid_id,
    make_error,
    make_notification,
    make_response,
    message_kind,
)
from .task_store import TaskStore
from .tools import ElicitationFailed, Tool
from .validation import ArgumentError, validate_arguments

logger = logging.getLogger("mcp_tasks_jupyter.demo")

MODERN_VERSIONS = ("2026-07-28",)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
CACHE_TTL_MS = 60_000
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def is_modern(message: Any) -> bool:
    """A request or notification in the 2026-07-28 shape: ``params._meta`` names a protocol
    version (an ``initialize`` never counts)."""
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return False
    if message["method"] == "initialize":
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_VERSION in meta


def unsupported_version(requested: Any) -> RpcError:
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(MODERN_VERSIONS), "requested": str(requested)},
    )


def missing_capability(message: str, required: dict[str, Any]) -> RpcError:
    return RpcError(MISSING_REQUIRED_CLIENT_CAPABILITY, message, {"requiredCapabilities": required})


def _decode_header(value: str) -> str | None:
    value = value.strip()
    if value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11:
        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


class Stream(Protocol):
    """Where the messages that belong to one request go (stdio: the pipe; HTTP: its SSE response)."""

    def send(self, message: dict[str, Any], *, task_id: str | None = None) -> None: ...


class NullStream:
    """A request answered with plain JSON: its notifications go nowhere."""

    def send(self, message: dict[str, Any], *, task_id: str | None = None) -> None:
        return None


@dataclass
class Request2026:
    """One request and what its ``_meta`` says about the client."""

    msg_id: Any
    method: str
    params: dict[str, Any]
    capabilities: dict[str, Any]
    client_info: dict[str, Any]
    stream: Stream
    log_threshold: int | None = None
    progress_token: Any = None

    def declares(self, extension: str) -> bool:
        """Whether this request's client capabilities include the extension."""
        extensions = self.capabilities.get("extensions")
        return isinstance(extensions, dict) and isinstance(extensions.get(extension), dict)

    @property
    def can_elicit(self) -> bool:
        elicitation = self.capabilities.get("elicitation")
        return isinstance(elicitation, dict) and (not elicitation or "form" in elicitation)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.stream.send(make_notification(method, params))

    def log(self, level: str, text: str) -> None:
        if self.log_threshold is not None and LOG_LEVELS.index(level) >= self.log_threshold:
            self.notify("notifications/message", {"level": level, "logger": "demo", "data": text})


class InlineContext:
    """The :class:`~.tools.ToolContext` of a body running inside one request: questions become
    multi round-trip requests (:mod:`.mrtr`), progress and logs travel with the request."""

    def __init__(self, request: Request2026, round_: Round) -> None:
        self.request = request
        self.round = round_

    @property
    def can_elicit(self) -> bool:
        return self.request.can_elicit

    def report(self, message: str, progress: float | None = None, total: float | None = None) -> None:
        if self.request.progress_token is not None and progress is not None:
            params: dict[str, Any] = {
                "progressToken": self.request.progress_token,
                "progress": progress,
                "message": message,
            }
            if total is not None:
                params["total"] = total
            self.request.notify("notifications/progress", params)

    def log(self, text: str) -> None:
        self.request.log("info", text)

    async def elicit(self, message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
        key = self.round.next_key()
        if key in self.round.answers:
            return self.round.answers[key]
        if not self.can_elicit:
            raise ElicitationFailed("the client did not declare the elicitation capability")
        self.round.asked[key] = {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": message, "requestedSchema": requested_schema},
        }
        await asyncio.sleep(0)  # questions asked at the same time (gather) join this round
        raise InputRequired(key)

    async def background(self) -> None:
        return None


class Extension(Protocol):
    """What an extension of the stateless protocol provides (the tasks extension does)."""

    name: str

    @property
    def methods(self) -> Mapping[str, Callable[[Request2026], Awaitable[dict[str, Any]]]]:
        """The extension's own methods, by name."""
        ...

    async def call_tool(
        self, base: Stateless2026, tool: Tool, arguments: dict[str, Any], request: Request2026, round_: Round
    ) -> dict[str, Any]: ...

    def watch(
        self, filter_value: Any, request: Request2026, send: Callable[[str, dict[str, Any]], None]
    ) -> tuple[Any, Callable[[], None]] | None:
        """Start sending the notifications a ``subscriptions/listen`` filter value asks for: the
        honoured part of the value and how to stop, or None if nothing can be honoured."""
        ...

    def snapshot(self, honoured: Any, send: Callable[[str, dict[str, Any]], None]) -> None:
        """Send the current state of what is watched, right after the acknowledgement."""
        ...


class Stateless2026:
    """The 2026-07-28 request handler, one per server process (it keeps no per-client state)."""

    def __init__(
        self,
        *,
        config: DemoConfig,
        store: TaskStore,
        tools: dict[str, Tool],
        server_version: str,
        extension: Extension | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.tools = tools
        self._tool_list = list(tools.values())
        self.server_version = server_version
        self.extension = extension
        self.codec = StateCodec()
        self._closing = asyncio.Event()
        self._methods: dict[str, Callable[[Request2026], Awaitable[dict[str, Any]]]] = {
            "server/discover": self._discover,
            "ping": self._ping,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/read": self._resources_read,
            "subscriptions/listen": self._listen,
        }
        if extension is not None:
            self._methods.update(extension.methods)

    @property
    def server_info(self) -> dict[str, Any]:
        return {"name": SERVER_NAME, "title": "MCP tasks demo server", "version": self.server_version}

    # -- checks ------------------------------------------------------------------------------

    def precheck(self, message: dict[str, Any], headers: Mapping[str, str] | None = None) -> RpcError | None:
        """Why this request cannot be served at all (transport headers, ``_meta``, version,
        method), or None. ``headers`` (HTTP only) are looked up case-insensitively."""
        method = message["method"]
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        header_version = headers.get("mcp-protocol-version") if headers is not None else None
        if headers is not None and header_version is None:
            return RpcError(HEADER_MISMATCH, "Header mismatch: missing MCP-Protocol-Version header")
        missing = [key for key in (META_VERSION, META_CAPABILITIES) if key not in meta]
        if missing:
            return RpcError(INVALID_PARAMS, f"Invalid params: missing _meta keys: {', '.join(missing)}")
        version = meta[META_VERSION]
        if header_version is not None and header_version.strip() != version:
            return RpcError(
                HEADER_MISMATCH,
                f"Header mismatch: MCP-Protocol-Version header {header_version!r} does not match "
                f"_meta {META_VERSION} {version!r}",
            )
        if version not in MODERN_VERSIONS:
            return unsupported_version(version)
        if not isinstance(meta[META_CAPABILITIES], dict):
            return RpcError(INVALID_PARAMS, f"Invalid params: _meta {META_CAPABILITIES} must be an object")
        if headers is not None:
            mismatch = self._check_headers(method, params, headers)
            if mismatch is not None:
                return mismatch
        if method not in self._methods:
            return RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return None

    @staticmethod
    def _check_headers(method: str, params: Any, headers: Mapping[str, str]) -> RpcError | None:
        header_method = headers.get("mcp-method")
        if header_method is None:
            return RpcError(HEADER_MISMATCH, "Header mismatch: missing Mcp-Method header")
        if header_method.strip() != method:
            return RpcError(
                HEADER_MISMATCH,
                f"Header mismatch: Mcp-Method header {header_method!r} does not match body {method!r}",
            )
        field = NAME_FIELDS.get(method)
        body_name = params.get(field) if field is not None and isinstance(params, dict) else None
        if isinstance(body_name, str):
            header_name = headers.get("mcp-name")
            if header_name is None:
                return RpcError(HEADER_MISMATCH, f"Header mismatch: missing Mcp-Name header (params.{field})")
            if _decode_header(header_name) != body_name:
                return RpcError(
                    HEADER_MISMATCH,
                    f"Header mismatch: Mcp-Name header value {header_name.strip()!r} does not match "
                    f"body params.{field} {body_name!r}",
                )
        return None

    @staticmethod
    def streams(message: dict[str, Any]) -> bool:
        """Whether an HTTP answer to this request should be an SSE stream (a subscription, or a
        request that asked for progress or log messages)."""
        if message.get("method") == "subscriptions/listen":
            return True
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        return isinstance(meta, dict) and ("progressToken" in meta or META_LOG_LEVEL in meta)

    # -- dispatch ----------------------------------------------------------------------------

    async def handle(
        self,
        message: Any,
        stream: Stream | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        prechecked: bool = False,
    ) -> dict[str, Any] | None:
        """The response to one request (None for a notification)."""
        kind = message_kind(message)
        if kind in ("notification", "response"):
            return None  # the stateless protocol defines no client notification but cancellation
        if kind == "invalid":
            msg_id = message.get("id") if isinstance(message, dict) and is_valid_id(message.get("id")) else None
            return make_error(msg_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request")
        msg_id, method = message["id"], message["method"]
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return make_error(msg_id, INVALID_PARAMS, "params must be an object")
        if not prechecked:
            problem = self.precheck(message, headers)
            if problem is not None:
                return {"jsonrpc": "2.0", "id": msg_id, "error": problem.to_error()}
        meta = params["_meta"]
        info = meta.get(META_CLIENT_INFO)
        level = meta.get(META_LOG_LEVEL)
        request = Request2026(
            msg_id=msg_id,
            method=method,
            params=params,
            capabilities=meta[META_CAPABILITIES],
            client_info=info if isinstance(info, dict) else {},
            stream=stream or NullStream(),
            log_threshold=LOG_LEVELS.index(level) if level in LOG_LEVELS else None,
            progress_token=meta.get("progressToken"),
        )
        try:
            return make_response(msg_id, await self._methods[method](request))
        except RpcError as exc:
            return {"jsonrpc": "2.0", "id": msg_id, "error": exc.to_error()}
        except Exception as exc:
            logger.exception("%s failed", method)
            return make_error(msg_id, INTERNAL_ERROR, f"Internal error: {exc}")

    def shutdown(self) -> None:
        """End every open subscription (each answers its listen request)."""
        self._closing.set()

    # -- methods -----------------------------------------------------------------------------

    async def _discover(self, request: Request2026) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"tools": {"listChanged": False}, "resources": {}}
        if self.extension is not None:
            capabilities["extensions"] = {self.extension.name: {}}
        return {
            "resultType": "complete",
            "supportedVersions": list(MODERN_VERSIONS),
            "capabilities": capabilities,
            "instructions": INSTRUCTIONS,
            "ttlMs": CACHE_TTL_MS,
            "cacheScope": "public",
            "_meta": {META_SERVER_INFO: self.server_info},
        }

    async def _ping(self, request: Request2026) -> dict[str, Any]:
        return {"resultType": "complete"}

    async def _resources_list(self, request: Request2026) -> dict[str, Any]:
        return {"resultType": "complete", **app_tools.list_resources()}

    async def _resources_read(self, request: Request2026) -> dict[str, Any]:
        found = app_tools.read_resource(request.params.get("uri"))
        if found is None:
            raise RpcError(app_tools.RESOURCE_NOT_FOUND, f"Resource not found: {request.params.get('uri')!r}")
        return {"resultType": "complete", **found}

    async def _tools_list(self, request: Request2026) -> dict[str, Any]:
        cursor = request.params.get("cursor")
        try:
            start = 0 if cursor is None else decode_cursor("tools", cursor)
        except InvalidCursor:
            raise RpcError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from None
        end = start + self.config.tools_page_size
        result: dict[str, Any] = {
            "resultType": "complete",
            "tools": [
                app_tools.for_client(tool.definition(), request.declares(app_tools.EXTENSION))
                for tool in self._tool_list[start:end]
            ],
            "ttlMs": CACHE_TTL_MS,
            "cacheScope": "public",
        }
        if end < len(self._tool_list):
            result["nextCursor"] = encode_cursor("tools", end)
        return result

    async def _tools_call(self, request: Request2026) -> dict[str, Any]:
        name = request.params.get("name")
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        try:
            arguments = validate_arguments(tool.input_schema, request.params.get("arguments"))
        except ArgumentError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid arguments for tool '{tool.name}': {exc}") from None
        round_ = self.codec.round_for(request.params, tool.name, arguments)
        if self.extension is not None:
            return await self.extension.call_tool(self, tool, arguments, request, round_)
        result = await self.run_body(tool, arguments, InlineContext(request, round_))
        return self.outcome(tool, arguments, round_, result)

    async def run_body(self, tool: Tool, arguments: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
        """Run a body inside its request: its result, or None when it asked a question this round
        cannot answer (the question is on the round)."""
        try:
            return await tool.body(arguments, ctx)
        except InputRequired:
            return None
        except ElicitationFailed as exc:
            raise missing_capability(f"Tool '{tool.name}' needs an answer: {exc}", {"elicitation": {}}) from None

    def outcome(
        self, tool: Tool, arguments: dict[str, Any], round_: Round, result: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The answer to a ``tools/call`` whose body ran inline: its result, or the questions."""
        if result is None:
            return {
                "resultType": "input_required",
                "inputRequests": round_.asked,
                "requestState": self.codec.encode(tool.name, arguments, round_.answers, round_.asked),
            }
        return {**result, "resultType": "complete"}

    async def _listen(self, request: Request2026) -> dict[str, Any]:
        wanted = request.params.get("notifications")
        if not isinstance(wanted, dict):
            raise RpcError(INVALID_PARAMS, "params.notifications must be an object")
        meta = {META_SUBSCRIPTION: request.msg_id}

        def send(method: str, params: dict[str, Any]) -> None:
            request.notify(method, {**params, "_meta": meta})

        honoured: dict[str, Any] = {}
        stop: Callable[[], None] | None = None
        if self.extension is not None and "taskIds" in wanted:
            watched = self.extension.watch(wanted["taskIds"], request, send)
            if watched is not None:
                honoured["taskIds"], stop = watched
        # the acknowledgement comes first: nothing above awaited, so no notification got ahead
        send("notifications/subscriptions/acknowledged", {"notifications": honoured})
        try:
            if self.extension is not None and "taskIds" in honoured:
                self.extension.snapshot(honoured["taskIds"], send)
            ends = self.config.listen_for_ms
            try:
                await asyncio.wait_for(self._closing.wait(), ends / 1000 if ends is not None else None)
            except TimeoutError:
                pass  # its time is up: the listen request is answered, its stream ends gracefully
        finally:
            if stop is not None:
                stop()
        return {"resultType": "complete", "_meta": meta}
