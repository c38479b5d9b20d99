"""One connection to one MCP server: requests and their answers, server requests, notifications.

Two wires: the stateful one (``initialize``, then plain requests) and the stateless 2026-07-28 one,
where every request carries ``_meta`` (protocol version, client capabilities, client info), HTTP
adds the routing headers, a request refused with -32022 is retried with a version the server
offers, and ``request_complete`` follows multi round-trip requests (``input_required``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from . import __version__
from .errors import (ConnectionFailed, InvalidMessage, MCPError, ProtocolError, RequestTimeout)
from .protocol import headers as wire_headers
from .protocol import jsonrpc, modern
from .protocol.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from .protocol.types import DiscoverResult, Implementation, InitializeResult, parse
from .protocol.versions import LATEST, LATEST_MODERN, MODERN, SUPPORTED
from .transport.base import Transport

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT_S = 30.0
CLIENT_INFO = {"name": "mcp-tasks-jupyter", "version": __version__}

#: Retries of one request refused with -32022 (unsupported protocol version).
MAX_VERSION_RETRIES = 2
#: Rounds of one multi round-trip request before the client gives up.
MAX_INPUT_ROUNDS = 16

RequestHandler = Callable[[dict[str, Any], Request], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[dict[str, Any]], None]
#: Answers a multi round-trip request's ``inputRequests`` (key → result); ``context`` is the
#: caller's (the task handle the request belongs to, or None).
InputAnswerer = Callable[[dict[str, dict[str, Any]], Any], Awaitable[dict[str, Any]]]


class HandlerError(Exception):
    """Raised by a request handler to answer the server with a specific JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Session:
    """A JSON-RPC session over one transport.

    Every request has a timeout (``None`` only for requests that wait for a task on purpose) and a
    cancel path: a timed-out or cancelled request is withdrawn with ``notifications/cancelled``.
    Server requests go to ``request_handlers[method]``; notifications to ``notification_handlers``;
    progress notifications to the listener registered for their token.
    """

    def __init__(self, transport: Transport, *, name: str | None = None,
                 capabilities: dict[str, Any] | None = None,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S) -> None:
        self.transport = transport
        self.name = name or transport.label
        self.capabilities = capabilities or {}
        self.request_timeout = request_timeout
        self.request_handlers: dict[str, RequestHandler] = {}
        self.notification_handlers: dict[str, NotificationHandler] = {}
        self.on_lost: list[Callable[[MCPError], None]] = []
        self.initialize_result: InitializeResult | None = None
        self.discover_result: DiscoverResult | None = None
        self.protocol_version: str | None = None
        #: The server as it introduced itself (initialize, or server/discover's _meta).
        self.server_info: Implementation | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        #: True on the stateless 2026-07-28 wire.
        self.modern = False
        #: Extensions declared in every request's capabilities (stateless wire), by identifier.
        self.extensions: dict[str, dict[str, Any]] = {}
        #: ``x-mcp-header`` parameters of each tool (by name), mirrored as headers on HTTP.
        self.param_headers: dict[str, wire_headers.ParamHeaders] = {}
        #: Who answers ``inputRequests`` of multi round-trip requests (the client sets it).
        self.answer_inputs: InputAnswerer | None = None
        self._meta: dict[str, Any] = {}
        self.closed_error: MCPError | None = None
        self.last_noise: InvalidMessage | None = None
        self._pending: dict[RequestId, tuple[asyncio.Future[dict[str, Any]], str]] = {}
        self._progress: dict[str | int, Callable[[dict[str, Any]], None]] = {}
        self._serving: dict[RequestId, asyncio.Task[None]] = {}
        self._next_id = 0

    @property
    def name(self) -> str:
        """How errors name the server."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value
        self.transport.server_name = value

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        await self.transport.start(self)

    async def initialize(self, version: str = LATEST) -> InitializeResult:
        """The stateful handshake: offer ``version``, accept any version this client knows."""
        self._go_legacy()
        raw = await self.request("initialize", {
            "protocolVersion": version, "capabilities": self.capabilities, "clientInfo": CLIENT_INFO})
        result = self.validate(InitializeResult, raw, "initialize result", "initialize")
        if result.protocol_version not in SUPPORTED:
            raise ProtocolError(f"the server speaks protocol {result.protocol_version!r}; this client "
                                f"speaks {', '.join(SUPPORTED)}", server=self.name, method="initialize")
        self.initialize_result = result
        self.protocol_version = result.protocol_version
        self.server_info = result.server_info
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        self.transport.set_protocol_version(result.protocol_version)
        await self.notify("notifications/initialized")
        await self.transport.open_listener()
        return result

    async def discover(self, version: str = LATEST_MODERN, *,
                       timeout: float | None | str = "default") -> DiscoverResult:
        """``server/discover`` on the stateless wire (which this switches to), with ``version`` first."""
        self._go_modern(version)
        raw = await self.request(modern.DISCOVER, {}, timeout=timeout)
        try:
            result = modern.parse_discover(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.name, method=modern.DISCOVER, data=raw) from None
        chosen = modern.pick_version(result.supported_versions, MODERN)
        if chosen is None:
            raise ProtocolError(f"the server supports protocol(s) {', '.join(result.supported_versions)}; "
                                f"this client speaks {', '.join(MODERN)} statelessly", server=self.name,
                                code=modern.UNSUPPORTED_PROTOCOL_VERSION, method=modern.DISCOVER,
                                data={"supported": result.supported_versions})
        if chosen != self.protocol_version:
            self._go_modern(chosen)
        self.discover_result = result
        self.server_info = modern.server_info(raw) or self.server_info
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        return result

    def declare_extension(self, identifier: str, settings: dict[str, Any] | None = None) -> None:
        """Declare an extension in every request's capabilities from now on (stateless wire)."""
        self.extensions[identifier] = settings or {}
        if self.modern and self.protocol_version:
            self._go_modern(self.protocol_version)

    def modern_capabilities(self) -> dict[str, Any]:
        """The per-request client capabilities: the legacy ones less ``tasks``, plus extensions."""
        caps = {k: v for k, v in self.capabilities.items() if k != "tasks"}
        if self.extensions:
            caps["extensions"] = dict(self.extensions)
        return caps

    def _go_modern(self, version: str) -> None:
        self.modern = True
        self.protocol_version = version
        self._meta = modern.request_meta(version, self.modern_capabilities(), CLIENT_INFO)
        self.transport.set_protocol_version(version, stateless=True)

    def _go_legacy(self) -> None:
        if self.modern:
            self.modern = False
            self.protocol_version = None
            self._meta = {}
            self.transport.set_protocol_version(None)

    async def close(self) -> None:
        for task in list(self._serving.values()):
            task.cancel()
        self._fail_all(ConnectionFailed("the connection was closed", server=self.name))
        self.closed_error = self.closed_error or ConnectionFailed("the connection was closed",
                                                                  server=self.name)
        await self.transport.close()

    # -- outgoing ------------------------------------------------------------------------------

    def validate(self, model: Any, data: Any, what: str, method: str) -> Any:
        """Validate a server answer; an invalid one raises InvalidMessage naming server and method."""
        try:
            return parse(model, data, what)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.name, method=method, data=data) from None

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      timeout: float | None | str = "default") -> dict[str, Any]:
        """Send a request and return its ``result`` object, or raise an MCPError.

        On the stateless wire the request carries the per-request ``_meta`` (and headers over
        HTTP); one refused with -32022 is sent again with a version the server offers.
        """
        if not self.modern:
            return await self._request(method, params, None, timeout)
        headers = self._headers(method, params)
        for attempt in range(MAX_VERSION_RETRIES + 1):
            try:
                return await self._request(method, modern.with_meta(params, self._meta), headers, timeout)
            except ProtocolError as exc:
                if exc.code != modern.UNSUPPORTED_PROTOCOL_VERSION or attempt == MAX_VERSION_RETRIES:
                    raise
                offered = modern.supported_versions(exc.data)
                version = modern.pick_version(offered, MODERN)
                if version is None:
                    raise ProtocolError(
                        f"the server supports protocol(s) {', '.join(offered) or '(none named)'}; this "
                        f"client speaks {', '.join(MODERN)} here", server=self.name, code=exc.code,
                        data=exc.data, method=method) from None
                log.info("%s: %s refused protocol %s; retrying with %s", self.name, method,
                         self.protocol_version, version)
                self._go_modern(version)
        raise AssertionError("unreachable")

    async def request_complete(self, method: str, params: dict[str, Any] | None = None, *,
                               timeout: float | None | str = "default", context: Any = None) -> dict[str, Any]:
        """``request`` that follows multi round-trip requests: an ``input_required`` result is
        answered through ``answer_inputs`` and the same method is sent again (a new request id)
        with ``inputResponses`` and the exact ``requestState``, until another kind of result."""
        base = params or {}
        current = base
        for _round in range(MAX_INPUT_ROUNDS):
            raw = await self.request(method, current, timeout=timeout)
            if modern.result_type(raw) != modern.INPUT_REQUIRED:
                return raw
            try:
                requests, state = modern.parse_input_required(raw)
            except ValueError as exc:
                raise InvalidMessage(str(exc), server=self.name, method=method, data=raw) from None
            if self.answer_inputs is None:
                raise ProtocolError("the server asks for input and nobody here answers it",
                                    server=self.name, method=method)
            responses = await self.answer_inputs(requests, context) if requests else {}
            current = modern.retry_params(base, responses, state)
        raise ProtocolError(f"the server asked for input {MAX_INPUT_ROUNDS} times in a row",
                            server=self.name, method=method)

    def _headers(self, method: str, params: dict[str, Any] | None) -> dict[str, str] | None:
        if not self.transport.carries_headers:
            return None
        headers = wire_headers.standard_headers(method, params)
        if method == "tools/call" and params:
            spec = self.param_headers.get(params.get("name"))  # type: ignore[arg-type]
            arguments = params.get("arguments")
            if spec and isinstance(arguments, dict):
                headers.update(wire_headers.argument_headers(spec, arguments))
        return headers

    async def _request(self, method: str, params: dict[str, Any] | None, headers: dict[str, str] | None,
                       timeout: float | None | str) -> dict[str, Any]:
        if self.closed_error is not None:
            raise self.closed_error
        msg_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = (future, method)
        seconds = self.request_timeout if timeout == "default" else timeout
        try:
            if seconds is None:
                await self.transport.send(jsonrpc.request(msg_id, method, params), headers)
                return await future
            try:
                # Over HTTP, send() itself waits for the answer's headers: it is inside the timeout.
                async with asyncio.timeout(seconds):  # type: ignore[arg-type]
                    await self.transport.send(jsonrpc.request(msg_id, method, params), headers)
                    return await future
            except TimeoutError:
                self._withdraw(msg_id, f"no answer within {seconds} s")
                raise RequestTimeout(f"{method}: no answer within {seconds} s", server=self.name) from None
        except asyncio.CancelledError:
            # Cancelling this coroutine also cancels the future it awaits: only a real answer counts.
            if not future.done() or future.cancelled():
                self._withdraw(msg_id, "cancelled by the client")
            raise
        finally:
            self._pending.pop(msg_id, None)

    def _withdraw(self, msg_id: RequestId, reason: str) -> None:
        if self.closed_error is None and not self.transport.withdraw(msg_id):
            self.spawn(self.notify("notifications/cancelled", {"requestId": msg_id, "reason": reason}))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.modern:
            params = modern.with_meta(params, self._meta)
            await self.transport.send(jsonrpc.notification(method, params), self._headers(method, params))
        else:
            await self.transport.send(jsonrpc.notification(method, params))

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run a fire-and-forget send; its failure is logged, never raised."""
        task = asyncio.ensure_future(coro)
        task.add_done_callback(_log_failure)

    def add_progress_listener(self, token: str | int, listener: Callable[[dict[str, Any]], None]) -> None:
        self._progress[token] = listener

    def remove_progress_listener(self, token: str | int) -> None:
        self._progress.pop(token, None)

    def withdraw_serving(self, request_id: RequestId) -> None:
        """Stop serving a server request (its answer would be stale): no reply is sent."""
        task = self._serving.get(request_id)
        if task is not None:
            task.cancel()

    # -- incoming (TransportEvents) --------------------------------------------------------------

    def message_received(self, message: Message) -> None:
        if isinstance(message, Response):
            entry = self._pending.get(message.id)
            if entry and not entry[0].done():
                entry[0].set_result(message.result)
        elif isinstance(message, ErrorResponse):
            entry = self._pending.get(message.id) if message.id is not None else None
            if entry and not entry[0].done():
                entry[0].set_exception(ProtocolError(message.message, server=self.name, code=message.code,
                                                     data=message.data, method=entry[1]))
            elif message.id is None:
                self.last_noise = InvalidMessage(f"the server reported an error: {message.message}",
                                                 server=self.name)
        elif isinstance(message, Request):
            task = asyncio.create_task(self._serve(message))
            self._serving[message.id] = task
            task.add_done_callback(lambda _t, i=message.id: self._serving.pop(i, None))
        else:
            self._notification(message)

    def request_failed(self, msg_id: RequestId, exc: MCPError) -> None:
        entry = self._pending.get(msg_id)
        if entry and not entry[0].done():
            entry[0].set_exception(exc)

    def noise_received(self, exc: InvalidMessage) -> None:
        self.last_noise = exc
        log.warning("%s", exc)

    def connection_lost(self, exc: MCPError) -> None:
        if self.closed_error is None:
            self.closed_error = exc
        self._fail_all(exc)
        for listener in list(self.on_lost):
            try:
                listener(exc)
            except Exception:  # a listener's bug must not hide the loss from the others
                log.exception("connection-lost listener failed")

    def _fail_all(self, exc: MCPError) -> None:
        for future, _method in list(self._pending.values()):
            if not future.done():
                future.set_exception(exc)
                future.exception()  # nobody may be waiting any more; do not warn about it

    def _notification(self, note: Notification) -> None:
        method = note.method
        if method == "notifications/progress":
            token = note.params.get("progressToken")
            listener = self._progress.get(token) if isinstance(token, (str, int)) else None
            if listener is not None:
                listener(note.params)
            return
        if method == "notifications/cancelled":
            request_id = note.params.get("requestId")
            if isinstance(request_id, (str, int)):
                self.withdraw_serving(request_id)
            return
        handler = self.notification_handlers.get(method)
        if handler is not None:
            try:
                handler(note.params)
            except Exception:
                log.exception("handler for %s failed", method)

    async def _serve(self, request: Request) -> None:
        handler = self.request_handlers.get(request.method)
        try:
            if request.method == "ping":
                reply = jsonrpc.result_response(request.id, {})
            elif handler is None:
                reply = jsonrpc.error_response(request.id, jsonrpc.METHOD_NOT_FOUND,
                                               f"this client does not handle {request.method}")
            else:
                result = await handler(request.params, request)
                reply = jsonrpc.result_response(request.id, result)
        except asyncio.CancelledError:
            return  # the server withdrew the request (or we are closing): send nothing
        except HandlerError as exc:
            reply = jsonrpc.error_response(request.id, exc.code, exc.message, exc.data)
        except InvalidMessage as exc:  # the server's request itself was malformed
            reply = jsonrpc.error_response(request.id, jsonrpc.INVALID_PARAMS, exc.message)
        except Exception as exc:
            log.exception("handler for %s failed", request.method)
            reply = jsonrpc.error_response(request.id, jsonrpc.INTERNAL_ERROR,
                                           f"the client's {request.method} handler failed: {exc}")
        try:
            await self.transport.send(reply)
        except MCPError as exc:
            log.warning("could not answer %s: %s", request.method, exc)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("background send failed: %s", task.exception())
