"""One connection to one MCP server: requests and their answers, server requests, notifications."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from . import __version__
from .errors import (ConnectionFailed, InvalidMessage, MCPError, ProtocolError, RequestTimeout)
from .protocol import jsonrpc
from .protocol.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from .protocol.types import InitializeResult, parse
from .protocol.versions import LATEST, SUPPORTED
from .transport.base import Transport

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT_S = 30.0
CLIENT_INFO = {"name": "mcp-tasks-jupyter", "version": __version__}

RequestHandler = Callable[[dict[str, Any], Request], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[dict[str, Any]], None]


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
        self.protocol_version: str | None = None
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

    async def initialize(self) -> InitializeResult:
        """The MCP handshake: offer the newest version, accept any version this client knows."""
        raw = await self.request("initialize", {
            "protocolVersion": LATEST, "capabilities": self.capabilities, "clientInfo": CLIENT_INFO})
        result = self.validate(InitializeResult, raw, "initialize result", "initialize")
        if result.protocol_version not in SUPPORTED:
            raise ProtocolError(f"the server speaks protocol {result.protocol_version!r}; this client "
                                f"speaks {', '.join(SUPPORTED)}", server=self.name, method="initialize")
        self.initialize_result = result
        self.protocol_version = result.protocol_version
        self.transport.set_protocol_version(result.protocol_version)
        await self.notify("notifications/initialized")
        await self.transport.open_listener()
        return result

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
        """Send a request and return its ``result`` object, or raise an MCPError."""
        if self.closed_error is not None:
            raise self.closed_error
        msg_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = (future, method)
        seconds = self.request_timeout if timeout == "default" else timeout
        try:
            if seconds is None:
                await self.transport.send(jsonrpc.request(msg_id, method, params))
                return await future
            try:
                # Over HTTP, send() itself waits for the answer's headers: it is inside the timeout.
                async with asyncio.timeout(seconds):  # type: ignore[arg-type]
                    await self.transport.send(jsonrpc.request(msg_id, method, params))
                    return await future
            except TimeoutError:
                self._withdraw(msg_id, f"no answer within {seconds} s")
                raise RequestTimeout(f"{method}: no answer within {seconds} s", server=self.name) from None
        except asyncio.CancelledError:
            if not future.done():
                self._withdraw(msg_id, "cancelled by the client")
            raise
        finally:
            self._pending.pop(msg_id, None)

    def _withdraw(self, msg_id: RequestId, reason: str) -> None:
        if self.closed_error is None:
            self.spawn(self.notify("notifications/cancelled", {"requestId": msg_id, "reason": reason}))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
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
