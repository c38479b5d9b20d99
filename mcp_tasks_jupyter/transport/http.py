"""Streamable HTTP transport (MCP 2025-03-26 and later).

Each message is one POST; the answer is JSON, an SSE stream (carrying server requests and
notifications before the response), or 202 for notifications and responses. A standalone GET SSE
stream carries server-initiated messages. Cut streams are resumed with ``Last-Event-ID`` after the
server's ``retry:`` delay. ``Mcp-Session-Id`` is taken from any answer and sent back; DELETE ends it.

On the stateless 2026-07-28 wire there is none of that: no session, no GET stream, no resumption;
every POST carries ``MCP-Protocol-Version`` plus the per-message headers the session computes
(``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``), and closing an answer's stream cancels its request.

Whatever the server sends is read bounded (``http_answers``: a JSON answer up to 64 MiB, an error
answer's body up to 8 KiB; ``sse``: an event up to 64 MiB). An answer that is not what was asked for
(not JSON, empty, another content type, too big) is an InvalidMessage saying what came; 401 and 403
are AuthenticationFailed, which nothing retries (the ``WWW-Authenticate`` challenge is kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import httpx

from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    HTTPStatusError,
    InvalidMessage,
    MCPError,
    ServerUnreachable,
    SessionExpired,
)
from ..protocol import jsonrpc
from ..protocol.jsonrpc import ErrorResponse, RequestId, Response
from ..redact import register_all, register_url, safe_url
from .auth import AuthHook
from .base import Transport, TransportEvents
from .http_answers import (
    MAX_ERROR_BODY_BYTES,
    SSE,
    auth_failure,
    body_text,
    content_type,
    printable,
    quote,
    read_at_most,
    read_json,
)
from .sse import StreamPosition, read_events

log = logging.getLogger(__name__)

DEFAULT_RETRY_MS = 1000
MAX_RESUME_ATTEMPTS = 5
MAX_LISTEN_BACKOFF_S = 30.0
LISTEN_OPEN_WAIT_S = 5.0
#: Ordinary exchanges in flight at once (a POST until its answer's headers, and a JSON answer's
#: body). httpcore's pool does work in proportion to connections² on every request, so hundreds of
#: polls let loose each open a connection and make every request dearer, until the client cannot
#: keep up; queued here instead, they wait at no cost. Streams (SSE) hold no slot once open.
MAX_EXCHANGES = 8
#: An exchange still waiting after this long (a server that holds back a blocking answer) gives
#: its slot back, so that slow requests never starve the others.
SLOT_HOLD_S = 2.0
MAX_CONNECTIONS = 256


def _resume_id(position: StreamPosition) -> str | None:
    """The id to resume a stream from, if it can go in a header (printable ASCII: an event id is any text)."""
    event_id = position.last_event_id
    return event_id if event_id is not None and event_id.isascii() and event_id.isprintable() else None


class StreamableHTTPTransport(Transport):
    """Talks to an MCP server at ``url``; ``headers`` (e.g. a bearer token) go on every request."""

    kind = "http"
    carries_headers = True

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        connect_timeout: float = 10.0,
        auth: AuthHook | None = None,
    ) -> None:
        self.url = url  # the real URL (its userinfo too) for requests; shown: the label, without it
        register_url(url)
        register_all(headers)
        self.label = self.server_name = safe_url(url)
        self._user_headers = dict(headers or {})
        self._connect_timeout = connect_timeout
        self._client: httpx.AsyncClient | None = None
        self._events: TransportEvents | None = None
        self.session_id: str | None = None
        self._protocol_version: str | None = None
        self._post_headers: dict[str, str] = {}
        self._get_headers: dict[str, str] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Task[None] | None = None
        #: The reader of each request's SSE answer (so that a withdrawn request closes its stream).
        self._streams: dict[RequestId, asyncio.Task[None]] = {}
        self.listening = False
        self.stateless = False
        self._closed = False
        self._slots = asyncio.Semaphore(MAX_EXCHANGES)
        #: Where credentials come from beyond ``headers`` (OAuth); its headers win over the user's.
        self.auth = auth
        if auth is not None:
            auth.on_change(self._rebuild_headers)
        self._rebuild_headers()

    # -- headers -------------------------------------------------------------------------------

    def _rebuild_headers(self) -> None:
        common = dict(self._user_headers)
        if self.auth is not None:
            common.update(self.auth.headers())
        if self.session_id:
            common["Mcp-Session-Id"] = self.session_id
        if self._protocol_version:
            common["MCP-Protocol-Version"] = self._protocol_version
        self._post_headers = {**common, "Accept": f"application/json, {SSE}", "Content-Type": "application/json"}
        self._get_headers = {**common, "Accept": SSE}

    def _note_session(self, response: httpx.Response) -> None:
        if self.stateless:
            return  # the 2026-07-28 wire has no sessions: never echo one
        sid = response.headers.get("mcp-session-id")
        if sid and sid != self.session_id:
            if not sid.isascii() or not sid.isprintable():
                raise InvalidMessage("the server sent an invalid Mcp-Session-Id", server=self.server_name)
            self.session_id = sid
            self._rebuild_headers()

    def set_protocol_version(self, version: str | None, *, stateless: bool = False) -> None:
        self._protocol_version = version
        self.stateless = stateless
        if stateless:
            self.session_id = None
        self._rebuild_headers()

    def reset_session(self) -> None:
        """Forget the session (the server ended it): no ``Mcp-Session-Id`` until the next
        ``initialize`` answer names one, and the standalone stream closes (it belongs to the old one)."""
        self.session_id = None
        self._rebuild_headers()
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None
        self.listening = False

    def withdraw(self, msg_id: RequestId) -> bool:
        if not self.stateless:
            return False
        stream = self._streams.pop(msg_id, None)
        if stream is not None:
            stream.cancel()  # closing the answer's stream is the cancellation (2026-07-28)
        return True

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self, events: TransportEvents) -> None:
        self._events = events
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, connect=self._connect_timeout, read=None),
            # Keep-alive as many as may be open: httpcore closes every idle connection once the pool
            # holds more than max_keepalive_connections in all (busy ones counted), so a lower
            # figure means a new TCP connection per request while many streams are open.
            limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS),
            follow_redirects=False,
        )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = list(self._background) + ([self._listener] if self._listener else [])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.auth is not None:
            await self.auth.aclose()
        client = self._client
        if client is None:
            return
        if self.session_id:
            try:
                await client.delete(self.url, headers=self._get_headers, timeout=2.0)
            except httpx.HTTPError:
                pass
        await client.aclose()

    def _read_in_background(self, response: httpx.Response, msg_id: RequestId) -> None:
        reader = asyncio.create_task(self._read_post_stream(response, msg_id))
        self._background.add(reader)
        self._streams[msg_id] = reader

        def done(task: asyncio.Task[None]) -> None:
            self._background.discard(task)
            if self._streams.get(msg_id) is task:
                del self._streams[msg_id]

        reader.add_done_callback(done)

    # -- sending -------------------------------------------------------------------------------

    def _connection_error(self, exc: httpx.HTTPError) -> ConnectionFailed:
        if isinstance(exc, httpx.ConnectError):
            return ServerUnreachable(
                f"cannot connect to {self.label}: {exc or 'connection refused'}", server=self.server_name
            )
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
            # The server went away mid-exchange (a restart closes its connections).
            return ServerUnreachable(
                f"the connection to {self.label} broke: {type(exc).__name__}: {exc}", server=self.server_name
            )
        if isinstance(exc, httpx.TimeoutException):
            return ConnectionFailed(
                f"timed out talking to {self.label} ({type(exc).__name__})", server=self.server_name
            )
        return ConnectionFailed(
            f"HTTP failure talking to {self.label}: {type(exc).__name__}: {exc}", server=self.server_name
        )

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        client, events = self._client, self._events
        if client is None or events is None or self._closed:
            raise ConnectionFailed("the connection is closed", server=self.server_name)
        msg_id: RequestId | None = message.get("id") if "method" in message else None
        request = client.build_request(
            "POST",
            self.url,
            content=jsonrpc.encode(message),
            headers={**self._post_headers, **headers} if headers else self._post_headers,
        )
        slot = await _Slot.take(self._slots)
        try:
            await self._exchange(client, events, request, message, msg_id)
        finally:
            slot.release()

    async def _exchange(
        self,
        client: httpx.AsyncClient,
        events: TransportEvents,
        request: httpx.Request,
        message: dict[str, Any],
        msg_id: RequestId | None,
    ) -> None:
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from None
        owned = True  # this exchange closes the response, unless a stream reader takes it
        try:
            self._note_session(response)
            status = response.status_code
            if status >= 400:
                await self._raise_status(response, msg_id, message.get("method"))
                return
            if msg_id is None:
                return  # 202 (or any 2xx) for a notification or a response
            ctype = content_type(response)
            if ctype == SSE:
                self._read_in_background(response, msg_id)
                owned = False  # the stream reader owns it now
                return
            for msg in await read_json(response, message.get("method"), self.server_name):
                events.message_received(msg)
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from None
        finally:
            if owned:
                await response.aclose()

    async def _raise_status(self, response: httpx.Response, msg_id: RequestId | None, method: str | None) -> None:
        status = response.status_code
        body, more = await read_at_most(response, MAX_ERROR_BODY_BYTES)
        if status in (401, 403):
            raise self._auth_failure(response, method or "message", body, more)
        # A JSON-RPC error for this very request is the most precise answer there is.
        if content_type(response) == "application/json" and msg_id is not None:
            try:
                for msg in jsonrpc.decode(body):
                    if isinstance(msg, ErrorResponse) and msg.id in (msg_id, None):
                        msg.id = msg_id
                        assert self._events is not None
                        self._events.message_received(msg)
                        return
            except (jsonrpc.MessageError, RecursionError):
                pass
        if status == 404 and self.session_id:
            raise SessionExpired(
                f"HTTP 404 for session {self.session_id}: the server ended the session", server=self.server_name
            )
        text = body_text(body, more)  # secrets scrubbed before the cut, which could split one
        raise HTTPStatusError(
            f"HTTP {status} {printable(response.reason_phrase, 60)} for {method or 'message'}"
            + (f": {text}" if text else ""),
            server=self.server_name,
            status_code=status,
            body=text,
        )

    def _auth_failure(self, response: httpx.Response, what: str, body: bytes, more: bool) -> AuthenticationFailed:
        names = tuple(self._user_headers) + (tuple(self.auth.headers()) if self.auth is not None else ())
        return auth_failure(response, what, body_text(body, more), names, self.server_name)

    # -- SSE streams ---------------------------------------------------------------------------

    def _deliver_event(self, data: str) -> list[Any]:
        assert self._events is not None
        if not data.strip():
            return []  # a priming event: only an id (and perhaps retry)
        try:
            messages = jsonrpc.decode(data)
        except (jsonrpc.MessageError, RecursionError) as exc:
            why = exc if isinstance(exc, jsonrpc.MessageError) else "nested too deeply"
            self._events.noise_received(
                InvalidMessage(
                    f"unreadable SSE event ({len(data)} characters): {why}; it begins {quote(data)}",
                    server=self.server_name,
                )
            )
            return []
        for msg in messages:
            self._events.message_received(msg)
        return messages

    async def _read_post_stream(self, response: httpx.Response, msg_id: RequestId) -> None:
        """Read a POST's SSE answer until the response arrives; resume it if the stream is cut."""
        assert self._events is not None and self._client is not None
        position = StreamPosition()
        attempts = 0
        while True:
            try:
                async with contextlib.aclosing(self._events_of(response, position)) as events:
                    async for event in events:
                        for msg in self._deliver_event(event.data):
                            if isinstance(msg, (Response, ErrorResponse)) and msg.id == msg_id:
                                return
            except httpx.HTTPError:
                pass
            except InvalidMessage as exc:  # an event past the size bound: resuming would send it again
                self._events.request_failed(msg_id, exc)
                return
            finally:
                await response.aclose()
            if self._closed:
                return
            resume_from = _resume_id(position)
            if resume_from is None or self.stateless:
                self._events.request_failed(
                    msg_id,
                    ConnectionFailed(
                        "the SSE stream closed before the answer arrived, and it cannot be resumed "
                        + (
                            "(the stateless wire has no resumption)"
                            if self.stateless
                            else "(it carried no event id)"
                            if position.last_event_id is None
                            else "(its event id cannot go in a Last-Event-ID header)"
                        ),
                        server=self.server_name,
                    ),
                )
                return
            attempts += 1
            if attempts > MAX_RESUME_ATTEMPTS:
                self._events.request_failed(
                    msg_id,
                    ConnectionFailed(
                        f"the SSE stream was cut {attempts} times before the answer arrived",
                        server=self.server_name,
                    ),
                )
                return
            await asyncio.sleep((position.retry_ms if position.retry_ms is not None else DEFAULT_RETRY_MS) / 1000)
            try:
                response = await self._open_get(resume_from)
            except MCPError as exc:
                self._events.request_failed(msg_id, exc)
                return

    def _events_of(self, response: httpx.Response, position: StreamPosition) -> Any:
        return read_events(response.aiter_bytes(), position, server=self.server_name)

    async def _open_get(self, last_event_id: str | None) -> httpx.Response:
        assert self._client is not None
        headers = self._get_headers
        if last_event_id is not None:
            headers = {**headers, "Last-Event-ID": last_event_id}
        request = self._client.build_request("GET", self.url, headers=headers)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from None
        status = response.status_code
        if status == 200 and content_type(response) == SSE:
            return response
        try:
            if status in (401, 403):
                body, more = await read_at_most(response, MAX_ERROR_BODY_BYTES)
                raise self._auth_failure(response, "the event stream (GET)", body, more)
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from None
        finally:
            await response.aclose()
        raise HTTPStatusError(
            f"GET for the event stream answered HTTP {status}", server=self.server_name, status_code=status
        )

    async def open_listener(self) -> None:
        """Open the standalone GET stream and wait (briefly) until the server took it or refused it.

        Waiting matters: servers drop messages meant for a stream that is not open yet.
        """
        if self._listener is None and not self._closed and not self.stateless:
            first_try = asyncio.get_running_loop().create_future()
            self._listener = asyncio.create_task(self._listen(first_try))
            await asyncio.wait([first_try], timeout=LISTEN_OPEN_WAIT_S)

    async def _listen(self, first_try: asyncio.Future[None]) -> None:
        """Keep the standalone GET stream open; reconnect with Last-Event-ID when it drops."""
        try:
            await self._listen_loop(StreamPosition(), first_try)
        finally:
            if not first_try.done():
                first_try.set_result(None)

    async def _listen_loop(self, position: StreamPosition, first_try: asyncio.Future[None]) -> None:
        backoff = 0.0
        while not self._closed:
            version = self.auth.version if self.auth is not None else 0
            try:
                response = await self._open_get(_resume_id(position))
            except AuthenticationFailed as exc:
                self.listening = False
                if self.auth is not None and await self._renewed(exc, version):
                    continue
                log.warning("%s: no event stream for server messages: %s", self.server_name, exc.detail)
                return  # the same credentials would be refused again: no reconnecting
            except HTTPStatusError as exc:
                if exc.status_code in (400, 404, 405, 409):
                    self.listening = False
                    return  # the server offers no standalone stream (or not to us)
                response = None
            except ConnectionFailed:
                response = None
            if not first_try.done():
                first_try.set_result(None)
            if response is not None:
                self.listening = True
                backoff = 0.0
                delay = None
                try:
                    async with contextlib.aclosing(self._events_of(response, position)) as events:
                        async for event in events:
                            self._deliver_event(event.data)
                except httpx.HTTPError:
                    pass
                except InvalidMessage as exc:  # an event past the size bound
                    assert self._events is not None
                    self._events.noise_received(exc)
                    backoff = delay = MAX_LISTEN_BACKOFF_S  # it would come again at once
                finally:
                    await response.aclose()
                self.listening = False
                if delay is None:
                    delay = (position.retry_ms if position.retry_ms is not None else DEFAULT_RETRY_MS) / 1000
            else:
                backoff = min(MAX_LISTEN_BACKOFF_S, max(1.0, backoff * 2))
                delay = backoff
            await asyncio.sleep(delay)

    async def _renewed(self, failure: AuthenticationFailed, version: int) -> bool:
        """Whether the auth hook put new credentials in place after ``failure`` (errors: no)."""
        assert self.auth is not None
        try:
            return await self.auth.challenged(failure, version)
        except MCPError as exc:
            log.warning("%s: %s", self.server_name, exc.detail)
            return False

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["session_id"] = self.session_id
        info["listening"] = self.listening
        info["stateless"] = self.stateless
        return info


class _Slot:
    """One of the transport's exchange slots: given back when the exchange ends, or after
    SLOT_HOLD_S, whichever comes first (giving it back twice is harmless)."""

    __slots__ = ("_slots", "_timer")

    def __init__(self, slots: asyncio.Semaphore) -> None:
        self._slots: asyncio.Semaphore | None = slots
        self._timer = asyncio.get_running_loop().call_later(SLOT_HOLD_S, self.release)

    @classmethod
    async def take(cls, slots: asyncio.Semaphore) -> _Slot:
        await slots.acquire()
        return cls(slots)

    def release(self) -> None:
        if self._slots is not None:
            self._slots.release()
            self._slots = None
            self._timer.cancel()
