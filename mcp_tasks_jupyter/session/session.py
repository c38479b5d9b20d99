"""One connection to one MCP server: requests and their answers, server requests, notifications.

Two wires: the stateful one (``initialize``, then plain requests) and the stateless 2026-07-28 one,
where every request carries ``_meta`` (protocol version, client capabilities, client info), HTTP
adds the routing headers, a request refused with -32022 is retried with a version the server
offers, and ``request_complete`` follows multi round-trip requests (``input_required``).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    HTTPStatusError,
    InvalidMessage,
    MCPError,
    ProtocolError,
    RequestTimeout,
    ServerExited,
    ServerUnreachable,
    SessionExpired,
)
from ..protocol import headers as wire_headers, jsonrpc, modern
from ..protocol.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from ..protocol.types import DiscoverResult, Implementation, InitializeResult, M, parse
from ..protocol.versions import LATEST, LATEST_MODERN, MODERN, SUPPORTED
from ..release import __version__
from ..transport.base import Transport
from .background import Background
from .deadlines import Deadlines

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT_S = 30.0
CLIENT_INFO = {"name": "mcp-tasks-jupyter", "version": __version__}

#: Retries of one request refused with -32022 (unsupported protocol version).
MAX_VERSION_RETRIES = 2
#: Times one request is sent again after the auth hook renewed credentials (refresh, sign-in, step-up).
MAX_AUTH_RETRIES = 3
#: Rounds of one multi round-trip request before the client gives up.
MAX_INPUT_ROUNDS = 16
#: How long an HTTP server that went away (connection refused or reset) is reconnected, with
#: backoff, before the connection and its unfinished tasks are given up (``connect(reconnect_for=)``).
RECONNECT_FOR_S = 300.0
#: The first pause before a reconnection attempt, doubled after each failed one up to the maximum.
RECONNECT_FIRST_DELAY_S = 0.25
RECONNECT_MAX_DELAY_S = 10.0
#: How long one reconnection probe (``ping``) may take.
RECONNECT_PROBE_TIMEOUT_S = 5.0
#: Server request ids remembered as answered, so that a repeated id is answered only once.
ANSWERED_IDS_KEPT = 1024
#: How often the answer to a server request is sent when it is lost on the way (a cut connection, a
#: 5xx, a timeout), with backoff from ANSWER_FIRST_DELAY_S doubling up to ANSWER_MAX_DELAY_S (about
#: a minute in all, and across a reconnection): while the session that asked stands and the server has
#: not withdrawn the request.
ANSWER_SENDS = 8
ANSWER_FIRST_DELAY_S = 0.25
ANSWER_MAX_DELAY_S = 15.0
#: Answers kept for a question asked again through a new session (the oldest are dropped).
ANSWERS_KEPT = 256

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

    def __init__(
        self,
        transport: Transport,
        *,
        name: str | None = None,
        capabilities: dict[str, Any] | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
    ) -> None:
        self.transport = transport
        self.name = name or transport.label
        self.capabilities = capabilities or {}
        self.request_timeout = request_timeout
        self.request_handlers: dict[str, RequestHandler] = {}
        self.notification_handlers: dict[str, NotificationHandler] = {}
        self.on_lost: list[Callable[[MCPError], None]] = []
        self.initialize_result: InitializeResult | None = None
        self.protocol_version: str | None = None
        #: The server as it introduced itself (initialize, or server/discover's _meta).
        self.server_info: Implementation | None = None
        #: A handshake (initialize or server/discover) was answered once: from then on, an unreachable
        #: server is reconnected to.
        self.handshaken = False
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
        #: Server requests to answer with an error instead of their handler's answer (request id → why).
        self._refusing: dict[RequestId, str] = {}
        self._answered: collections.OrderedDict[RequestId, None] = collections.OrderedDict()
        #: The answers given, by (method, params), with the session generation they were given in: a server
        #: that asks the same again through a new session (the old one's answer was lost, or it re-asks
        #: where the task is awaited) gets the same answer, and nobody is asked twice.
        self._given: collections.OrderedDict[tuple[str, str], tuple[int, dict[str, Any]]] = (
            collections.OrderedDict()
        )
        self._next_id = 0
        self.background = Background(self._name)
        #: Sessions started on this connection: 0 for the first, +1 each time the server ended one.
        self.generation = 0
        #: How long a server that went away is reconnected before giving up (HTTP).
        self.reconnect_for = RECONNECT_FOR_S
        #: When the server stopped answering (a time.time()), while reconnecting; else None.
        self.reconnecting_since: float | None = None
        #: Called (no arguments) when reconnecting starts or ends.
        self.on_connection: list[Callable[[], None]] = []
        #: Called (no arguments) when the transport's push channel opens or drops (the GET stream).
        self.on_channel: list[Callable[[], None]] = []
        transport.on_channel_change = self._channel_changed
        self._reachable = asyncio.Event()
        self._reachable.set()
        self._renewal: asyncio.Task[None] | None = None
        #: The timeouts of requests in flight, behind one timer (not one armed per request).
        self._deadlines = Deadlines()
        #: The event loop the session's requests run on (known from the first request).
        self._loop: asyncio.AbstractEventLoop | None = None

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
        raw = await self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": self.capabilities, "clientInfo": CLIENT_INFO},
        )
        result = self.validate(InitializeResult, raw, "initialize result", "initialize")
        if result.protocol_version not in SUPPORTED:
            raise ProtocolError(
                f"the server speaks protocol {result.protocol_version!r}; this client "
                f"speaks {', '.join(SUPPORTED)}",
                server=self.name,
                method="initialize",
            )
        self.initialize_result = result
        self.protocol_version = result.protocol_version
        self.server_info = result.server_info
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        self.handshaken = True
        self.transport.set_protocol_version(result.protocol_version)
        await self.notify("notifications/initialized")
        await self.transport.open_listener()
        return result

    async def discover(
        self, version: str = LATEST_MODERN, *, timeout: float | str | None = "default"
    ) -> DiscoverResult:
        """``server/discover`` on the stateless wire (which this switches to), with ``version`` first."""
        self._go_modern(version)
        raw = await self.request(modern.DISCOVER, {}, timeout=timeout)
        try:
            result = modern.parse_discover(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.name, method=modern.DISCOVER, data=raw) from None
        chosen = modern.pick_version(result.supported_versions, MODERN)
        if chosen is None:
            raise ProtocolError(
                f"the server supports protocol(s) {', '.join(result.supported_versions)}; "
                f"this client speaks {', '.join(MODERN)} statelessly",
                server=self.name,
                code=modern.UNSUPPORTED_PROTOCOL_VERSION,
                method=modern.DISCOVER,
                data={"supported": result.supported_versions},
            )
        if chosen != self.protocol_version:
            self._go_modern(chosen)
        self.server_info = modern.server_info(raw) or self.server_info
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        self.handshaken = True
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
        await self.background.aclose()
        self._deadlines.close()
        self._reachable.set()
        self._fail_all(ConnectionFailed("the connection was closed", server=self.name))
        self.closed_error = self.closed_error or ConnectionFailed("the connection was closed", server=self.name)
        await self.transport.close()

    # -- outgoing ------------------------------------------------------------------------------

    def validate(self, model: type[M], data: Any, what: str, method: str) -> M:
        """Validate a server answer; an invalid one raises InvalidMessage naming server and method."""
        try:
            return parse(model, data, what)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.name, method=method, data=data) from None

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | str | None = "default"
    ) -> dict[str, Any]:
        """Send a request and return its ``result`` object, or raise an MCPError.

        On the stateless wire the request carries the per-request ``_meta`` (and headers over
        HTTP); one refused with -32022 is sent again with a version the server offers.
        """
        renewed = False
        for _attempt in range(MAX_AUTH_RETRIES + 2):
            if self._renewal is not None and method != "initialize":
                # A new session is being started: nothing may go out without its id (the server would
                # refuse it as sessionless). Wait for it; its failure is this request's too.
                await asyncio.shield(self._renewal)
            generation = self.generation
            auth = self.transport.auth  # what _auth_version() says, without a call per request
            auth_version = auth.version if auth is not None else 0
            try:
                return await self._request_versioned(method, params, timeout)
            except SessionExpired as exc:
                if renewed or method == "initialize" or self.modern:
                    raise
                renewed = True
                await self.renew(generation, exc)
            except ServerUnreachable:
                self._unreachable()
                raise
            except AuthenticationFailed as exc:
                if not await self._reauthorized(exc, auth_version):
                    raise
        raise AssertionError("unreachable")

    def _auth_version(self) -> int:
        auth = self.transport.auth
        return auth.version if auth is not None else 0

    async def _reauthorized(self, failure: AuthenticationFailed, version: int) -> bool:
        """Whether the transport's auth hook (OAuth) put new credentials in place after ``failure``:
        then the request is sent again (a refresh, a sign-in, a step-up; the hook bounds how often)."""
        auth = self.transport.auth
        return auth is not None and await auth.challenged(failure, version)

    def _request_versioned(
        self, method: str, params: dict[str, Any] | None, timeout: float | str | None
    ) -> Awaitable[dict[str, Any]]:
        # A plain function: on the stateful wire the request itself is awaited (a coroutine less per poll).
        if not self.modern:
            return self._request(method, params, None, timeout)
        return self._request_modern(method, params, timeout)

    async def _request_modern(
        self, method: str, params: dict[str, Any] | None, timeout: float | str | None
    ) -> dict[str, Any]:
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
                        f"client speaks {', '.join(MODERN)} here",
                        server=self.name,
                        code=exc.code,
                        data=exc.data,
                        method=method,
                    ) from None
                log.info(
                    "%s: %s refused protocol %s; retrying with %s",
                    self.name,
                    method,
                    self.protocol_version,
                    version,
                )
                self._go_modern(version)
        raise AssertionError("unreachable")

    # -- a lost session, a server that went away --------------------------------------------------

    @property
    def reconnecting(self) -> bool:
        """Whether the server stopped answering and the client is trying to reach it again."""
        return self.reconnecting_since is not None

    async def renew(self, seen_generation: int, cause: SessionExpired) -> None:
        """The server ended our session (HTTP 404): start a new one, once per loss. Callers that saw
        the same loss share one renewal; one that saw an older session only retries."""
        if self.generation != seen_generation:
            return
        if self._renewal is None:
            self._renewal = self.background.spawn(self._renew(cause), name=f"mcp-renew {self.name}")
        await asyncio.shield(self._renewal)

    async def _renew(self, cause: SessionExpired) -> None:
        log.warning("%s: %s; starting a new session", self.name, cause.detail)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_for
        delay = RECONNECT_FIRST_DELAY_S
        try:
            while True:
                self.transport.reset_session()
                try:
                    await self.initialize(self.protocol_version or LATEST)
                    break
                except (ConnectionFailed, RequestTimeout) as exc:
                    if _refused(exc) or loop.time() + delay > deadline or self.closed_error is not None:
                        raise ConnectionFailed(
                            f"the server ended the session and a new one could not be started: {exc.detail}",
                            server=self.name,
                        ) from None
                    log.info("%s: a new session failed (%s); again in %.1f s", self.name, exc.detail, delay)
                await asyncio.sleep(delay)
                delay = min(RECONNECT_MAX_DELAY_S, delay * 2)
            self.generation += 1
            self._answered.clear()
            log.info("%s: new session started", self.name)
        finally:
            self._renewal = None

    def _unreachable(self) -> None:
        """A request found the server unreachable: reconnect in the background (once at a time).
        Not before the first handshake: a server never reached fails the connect at once, with nothing
        said of reconnecting (there is no connection to keep)."""
        if self.closed_error is not None or self.reconnecting_since is not None or not self.handshaken:
            return
        self.reconnecting_since = time.time()
        self._reachable.clear()
        log.warning(
            "%s: the server cannot be reached; reconnecting for up to %.0f s", self.name, self.reconnect_for
        )
        self._connection_changed()
        self.background.spawn(self._reconnect(), name=f"mcp-reconnect {self.name}")

    async def _reconnect(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_for
        delay = RECONNECT_FIRST_DELAY_S
        last = "connection refused"
        try:
            while self.closed_error is None:
                await asyncio.sleep(max(0.0, min(delay, deadline - loop.time())))
                if await self._answers(deadline):
                    break
                last = self._last_probe_error
                if loop.time() >= deadline:
                    self.connection_lost(
                        ConnectionFailed(
                            f"the server did not come back within {self.reconnect_for:.0f} s ({last}); its "
                            f"unfinished tasks are given up here (they may still run on the server)",
                            server=self.name,
                        )
                    )
                    break
                delay = min(RECONNECT_MAX_DELAY_S, delay * 2)
        finally:
            self.reconnecting_since = None
            self._reachable.set()
            self._connection_changed()
        if self.closed_error is None:
            log.info("%s: the server is reachable again", self.name)  # good news is no warning (red in a cell)

    async def _answers(self, deadline: float) -> bool:
        """One reconnection probe: does the server answer at all (any answer counts)?"""
        timeout = max(0.5, min(RECONNECT_PROBE_TIMEOUT_S, deadline - asyncio.get_running_loop().time()))
        generation = self.generation
        try:
            try:
                await self._request_versioned("ping", None, timeout)
            except SessionExpired as exc:  # back, without our session: start a new one
                await self.renew(generation, exc)
            return True
        except (ProtocolError, HTTPStatusError):
            return True  # it answers (an error is an answer; what polls get then is theirs to judge)
        except (ConnectionFailed, RequestTimeout) as exc:
            self._last_probe_error = exc.detail
            return False

    _last_probe_error = "connection refused"

    async def wait_reachable(self) -> None:
        """Return once the server answers again, or the connection was given up (``closed_error``)."""
        await self._reachable.wait()

    def _channel_changed(self) -> None:
        for listener in list(self.on_channel):
            try:
                listener()
            except Exception:
                log.exception("push channel listener failed")

    def _connection_changed(self) -> None:
        for listener in list(self.on_connection):
            try:
                listener()
            except Exception:
                log.exception("connection listener failed")

    async def request_complete(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | str | None = "default",
        context: Any = None,
    ) -> dict[str, Any]:
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
                raise ProtocolError(
                    "the server asks for input and nobody here answers it", server=self.name, method=method
                )
            responses = await self.answer_inputs(requests, context) if requests else {}
            current = modern.retry_params(base, responses, state)
        raise ProtocolError(
            f"the server asked for input {MAX_INPUT_ROUNDS} times in a row", server=self.name, method=method
        )

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

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        headers: dict[str, str] | None,
        timeout: float | str | None,
    ) -> dict[str, Any]:
        if self.closed_error is not None:
            raise self.closed_error
        msg_id = self._next_id
        self._next_id += 1
        loop = self._loop
        if loop is None:  # asyncio.get_running_loop() makes a getpid() system call: once per session
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[msg_id] = (future, method)
        seconds = self.request_timeout if timeout == "default" else timeout
        try:
            if seconds is None:
                await self.transport.send_request(msg_id, method, params, headers)
                return await future
            # Over HTTP, send() itself waits for the answer's headers: it is inside the timeout.
            deadline = self._deadlines.start(seconds, loop)  # type: ignore[arg-type]
            try:
                await self.transport.send_request(msg_id, method, params, headers)
                return await future
            except asyncio.CancelledError:
                if not deadline.timed_out():
                    raise
                self._withdraw(msg_id, f"no answer within {seconds} s")
                raise RequestTimeout(f"{method}: no answer within {seconds} s", server=self.name) from None
            finally:
                deadline.finish()
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
        version = self._auth_version()
        try:
            await self._notify(method, params)
        except AuthenticationFailed as exc:
            if not await self._reauthorized(exc, version):
                raise
            await self._notify(method, params)

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        if self.modern:
            params = modern.with_meta(params, self._meta)
            await self.transport.send(jsonrpc.notification(method, params), self._headers(method, params))
        else:
            await self.transport.send(jsonrpc.notification(method, params))

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run a fire-and-forget send, owned by the session; its failure is logged, never raised."""
        self.background.spawn(coro)  # type: ignore[arg-type]

    def add_progress_listener(self, token: str | int, listener: Callable[[dict[str, Any]], None]) -> None:
        self._progress[token] = listener

    def remove_progress_listener(self, token: str | int) -> None:
        self._progress.pop(token, None)

    def withdraw_serving(self, request_id: RequestId) -> None:
        """Stop serving a server request (the server withdrew it): no reply is sent."""
        task = self._serving.get(request_id)
        if task is not None:
            task.cancel()

    def refuse_serving(self, request_id: RequestId, reason: str) -> None:
        """Stop serving a server request whose answer would be stale (its task ended): the server
        gets an error saying ``reason`` instead of an answer."""
        task = self._serving.get(request_id)
        if task is not None and not task.done():
            self._refusing[request_id] = reason
            task.cancel()

    def _served(self, request_id: RequestId) -> None:
        self._serving.pop(request_id, None)
        self._refusing.pop(request_id, None)
        self._answered[request_id] = None
        if len(self._answered) > ANSWERED_IDS_KEPT:
            self._answered.popitem(last=False)

    # -- incoming (TransportEvents) --------------------------------------------------------------

    def message_received(self, message: Message) -> None:
        if isinstance(message, Response):
            entry = self._pending.get(message.id)
            if entry and not entry[0].done():
                entry[0].set_result(message.result)
        elif isinstance(message, ErrorResponse):
            entry = self._pending.get(message.id) if message.id is not None else None
            if entry and not entry[0].done():
                entry[0].set_exception(
                    ProtocolError(
                        message.message, server=self.name, code=message.code, data=message.data, method=entry[1]
                    )
                )
            elif message.id is None:
                self.last_noise = InvalidMessage(
                    f"the server reported an error: {message.message}", server=self.name
                )
        elif isinstance(message, Request):
            if message.id in self._serving or message.id in self._answered:
                log.warning(
                    "%s: the server sent request id %r again (%s); it is answered once",
                    self.name,
                    message.id,
                    message.method,
                )
                return
            task = self.background.spawn(self._serve(message), name=f"mcp-serve {message.method}")
            self._serving[message.id] = task
            request_id = message.id
            task.add_done_callback(lambda _task: self._served(request_id))
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
                try:
                    listener(note.params)
                except Exception:  # a listener's bug (or a value it cannot take) must not stop the reader
                    log.exception("%s: progress listener failed", self.name)
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
        generation = self.generation
        handler = self.request_handlers.get(request.method)
        asked = (request.method, json.dumps(request.params, sort_keys=True, default=str))
        try:
            if request.method == "ping":
                reply = jsonrpc.result_response(request.id, {})
            elif asked in self._given and self._given[asked][0] != generation:
                log.info(
                    "%s: %s asked again through a new session: the earlier answer is sent",
                    self.name,
                    request.method,
                )
                reply = jsonrpc.result_response(request.id, self._given[asked][1])
            elif handler is None:
                reply = jsonrpc.error_response(
                    request.id, jsonrpc.METHOD_NOT_FOUND, f"this client does not handle {request.method}"
                )
            else:
                result = await handler(request.params, request)
                reply = jsonrpc.result_response(request.id, result)
        except asyncio.CancelledError:
            reason = self._refusing.pop(request.id, None)
            if reason is None or self.closed_error is not None:
                return  # the server withdrew the request (or we are closing): send nothing
            reply = jsonrpc.error_response(request.id, jsonrpc.INVALID_PARAMS, reason)
        except HandlerError as exc:
            reply = jsonrpc.error_response(request.id, exc.code, exc.message, exc.data)
        except InvalidMessage as exc:  # the server's request itself was malformed
            reply = jsonrpc.error_response(request.id, jsonrpc.INVALID_PARAMS, exc.message)
        except Exception as exc:
            log.exception("handler for %s failed", request.method)
            reply = jsonrpc.error_response(
                request.id, jsonrpc.INTERNAL_ERROR, f"the client's {request.method} handler failed: {exc}"
            )
        if "result" in reply and request.method != "ping":
            self._given[asked] = (generation, reply["result"])
            if len(self._given) > ANSWERS_KEPT:
                self._given.popitem(last=False)
        await self._send_answer(request, reply, generation)

    async def _send_answer(self, request: Request, reply: dict[str, Any], generation: int) -> bool:
        """Send the answer to a server request. One lost on the way is sent again with backoff (a
        repeated answer is harmless: the server takes the first) while the session that asked stands;
        never to a new session (it did not ask), never after a refusal (401/403, a stdio server gone).
        A server that cannot be reached is reconnected, as for a request, and the next send waits until
        it answers again (within ``reconnect_for``). A 404 for the session ends it, as it does for a
        request: a new one is started, through which the server asks its open question again (a task's
        question comes through the session that waits for the task) and gets the answer kept for it
        (``_given``). The server withdrawing the request, or the task ending, cancels this
        (``withdraw_serving``, ``refuse_serving``). Whether the answer went out."""
        delay = ANSWER_FIRST_DELAY_S
        for attempt in range(1, ANSWER_SENDS + 1):
            try:
                await self.transport.send(reply)
                return True
            except SessionExpired as exc:
                log.warning("%s: could not answer %s: %s", self.name, request.method, exc)
                if not self.modern and self.closed_error is None:
                    try:
                        await self.renew(generation, exc)
                    except ConnectionFailed as failure:  # the requests that follow meet it too
                        log.warning("%s: %s", self.name, failure)
                return False
            except (ConnectionFailed, RequestTimeout) as exc:
                lasting = isinstance(exc, (AuthenticationFailed, ServerExited)) or (
                    isinstance(exc, HTTPStatusError) and exc.status_code < 500
                )
                if lasting or attempt == ANSWER_SENDS or self.closed_error is not None:
                    log.warning("%s: could not answer %s: %s", self.name, request.method, exc)
                    return False
                log.info("%s: the answer to %s was lost (%s); sending it again", self.name, request.method, exc)
                if isinstance(exc, ServerUnreachable):
                    self._unreachable()  # as a request would: reconnect, and send again once it answers
            except MCPError as exc:
                log.warning("%s: could not answer %s: %s", self.name, request.method, exc)
                return False
            if self.reconnecting:
                await self.wait_reachable()
            else:
                await asyncio.sleep(delay)
                delay = min(ANSWER_MAX_DELAY_S, delay * 2)
            if self.generation != generation or self.closed_error is not None:
                log.warning(
                    "%s: the session that asked %s has ended; its answer is kept in case it asks again",
                    self.name,
                    request.method,
                )
                return False
        return False


def _refused(exc: MCPError) -> bool:
    """An answer that says no to this client (401/403): retrying cannot help."""
    return isinstance(exc, HTTPStatusError) and exc.status_code in (401, 403)
