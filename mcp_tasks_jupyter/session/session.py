"""One connection to one MCP server: our requests and their answers, with the handshake.

The server's own requests and notifications are served by ``ServerRequests`` (``server_requests.py``),
a new session after a 404 and reconnection by ``Reconnection`` (``reconnection.py``); the session
holds one of each and its requests go through them (a request waits for a renewal, a request that
finds the server unreachable starts reconnection).


Two wires: the stateful one (``initialize``, then plain requests) and the stateless 2026-07-28 one,
where every request carries ``_meta`` (protocol version, client capabilities, client info), HTTP
adds the routing headers, a request refused with -32022 is retried with a version the server
offers, and ``request_complete`` follows multi round-trip requests (``input_required``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    InvalidMessage,
    MCPError,
    ProtocolError,
    RequestTimeout,
    ServerUnreachable,
    SessionExpired,
)
from ..protocol import headers as wire_headers, jsonrpc, modern
from ..protocol.jsonrpc import ErrorResponse, Message, Request, RequestId, Response
from ..protocol.types import DiscoverResult, Implementation, InitializeResult, M, parse
from ..protocol.versions import LATEST, LATEST_MODERN, MODERN, SUPPORTED
from ..release import __version__
from ..transport.base import Transport
from .background import Background
from .deadlines import Deadlines
from .listeners import tell
from .reconnection import Reconnection
from .server_requests import ServerRequests

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT_S = 30.0
CLIENT_INFO = {"name": "mcp-tasks-jupyter", "version": __version__}

#: Retries of one request refused with -32022 (unsupported protocol version).
MAX_VERSION_RETRIES = 2
#: Times one request is sent again after the auth hook renewed credentials (refresh, sign-in, step-up).
MAX_AUTH_RETRIES = 3
#: Rounds of one multi round-trip request before the client gives up.
MAX_INPUT_ROUNDS = 16
#: Answers a multi round-trip request's ``inputRequests`` (key → result); ``context`` is the
#: caller's (the task handle the request belongs to, or None).
InputAnswerer = Callable[[dict[str, dict[str, Any]], Any], Awaitable[dict[str, Any]]]


class Session:
    """A JSON-RPC session over one transport.

    Every request has a timeout (``None`` only for requests that wait for a task on purpose) and a
    cancel path: a timed-out or cancelled request is withdrawn with ``notifications/cancelled``.
    Who serves the server's requests and notifications is registered with ``server_requests``
    (``on_request``, ``on_notification``, ``add_progress_listener``); who hears of the connection's
    changes, with ``when_lost``, ``when_reconnecting`` and ``when_channel_changes``.
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
        self._lost_listeners: list[Callable[[MCPError], None]] = []
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
        self._param_headers: dict[str, wire_headers.ParamHeaders] = {}
        #: Who answers ``inputRequests`` of multi round-trip requests (the client sets it).
        self._answer_inputs: InputAnswerer | None = None
        self._meta: dict[str, Any] = {}
        self.closed_error: MCPError | None = None
        self.last_noise: InvalidMessage | None = None
        self._pending: dict[RequestId, tuple[asyncio.Future[dict[str, Any]], str]] = {}
        self._next_id = 0
        self.background = Background(self._name)
        #: The server's own requests and notifications, and who serves them.
        self.server_requests = ServerRequests(self)
        #: A new session after a 404, reconnection to a server that went away.
        self.reconnection = Reconnection(self)
        self._channel_listeners: list[Callable[[], None]] = []
        transport.on_channel_change = self._channel_changed
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

    # -- who hears what (the registration interface) -------------------------------------------

    def when_lost(self, listener: Callable[[MCPError], None]) -> None:
        """Call ``listener`` with the error when the connection is given up."""
        self._lost_listeners.append(listener)

    def when_reconnecting(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (no arguments) when reconnecting starts or ends."""
        self.reconnection.when_changed(listener)

    def when_channel_changes(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (no arguments) when the transport's push channel opens or drops."""
        self._channel_listeners.append(listener)

    def answer_inputs_with(self, answerer: InputAnswerer) -> None:
        """Who answers the ``inputRequests`` of multi round-trip requests (``request_complete``)."""
        self._answer_inputs = answerer

    def mirror_param_headers(self, headers: dict[str, wire_headers.ParamHeaders]) -> None:
        """The ``x-mcp-header`` parameters of each tool (by name), sent as headers with its calls."""
        self._param_headers = headers

    # -- the connection's state, as reconnection keeps it ---------------------------------------------

    @property
    def generation(self) -> int:
        """Sessions started on this connection: 0 for the first, +1 each time the server ended one."""
        return self.reconnection.generation

    @property
    def reconnect_for(self) -> float:
        """How long a server that went away is reconnected before giving up (HTTP)."""
        return self.reconnection.reconnect_for

    @reconnect_for.setter
    def reconnect_for(self, seconds: float) -> None:
        self.reconnection.reconnect_for = seconds

    @property
    def reconnecting_since(self) -> float | None:
        """When the server stopped answering (a ``time.time()``), while reconnecting; else None."""
        return self.reconnection.since

    @property
    def reconnecting(self) -> bool:
        """Whether the server stopped answering and the client is trying to reach it again."""
        return self.reconnection.since is not None

    async def wait_reachable(self) -> None:
        """Return once the server answers again, or the connection was given up (``closed_error``)."""
        await self.reconnection.wait_reachable()

    async def renew(self, seen_generation: int, cause: SessionExpired) -> None:
        """The server ended our session (HTTP 404): start a new one, once per loss."""
        await self.reconnection.renew(seen_generation, cause)

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
        self.server_requests.close()
        await self.background.aclose()
        self._deadlines.close()
        self.reconnection.closed()
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
            renewal = self.reconnection.renewal
            if renewal is not None and method != "initialize":
                # A new session is being started: nothing may go out without its id (the server would
                # refuse it as sessionless). Wait for it; its failure is this request's too.
                await asyncio.shield(renewal)
            generation = self.generation
            auth = self.transport.auth  # what _auth_version() says, without a call per request
            auth_version = auth.version if auth is not None else 0
            try:
                return await self.request_once(method, params, timeout)
            except SessionExpired as exc:
                if renewed or method == "initialize" or self.modern:
                    raise
                renewed = True
                await self.renew(generation, exc)
            except ServerUnreachable:
                self.reconnection.unreachable()
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

    def request_once(
        self, method: str, params: dict[str, Any] | None, timeout: float | str | None
    ) -> Awaitable[dict[str, Any]]:
        """The request as sent once (with the stateless wire's version retry): no renewal, no
        reconnection, no new credentials (a reconnection's probe)."""
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

    def _channel_changed(self) -> None:
        tell(self._channel_listeners, what="push channel")

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
            if self._answer_inputs is None:
                raise ProtocolError(
                    "the server asks for input and nobody here answers it", server=self.name, method=method
                )
            responses = await self._answer_inputs(requests, context) if requests else {}
            current = modern.retry_params(base, responses, state)
        raise ProtocolError(
            f"the server asked for input {MAX_INPUT_ROUNDS} times in a row", server=self.name, method=method
        )

    def _headers(self, method: str, params: dict[str, Any] | None) -> dict[str, str] | None:
        if not self.transport.carries_headers:
            return None
        headers = wire_headers.standard_headers(method, params)
        if method == "tools/call" and params:
            spec = self._param_headers.get(params.get("name"))  # type: ignore[arg-type]
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
            self.server_requests.received(message)
        else:
            self.server_requests.notified(message)

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
        tell(self._lost_listeners, exc, what="connection-lost")

    def _fail_all(self, exc: MCPError) -> None:
        for future, _method in list(self._pending.values()):
            if not future.done():
                future.set_exception(exc)
                future.exception()  # nobody may be waiting any more; do not warn about it
