"""Streamable HTTP transport (MCP 2025-03-26 and later).

Each message is one POST; the answer is JSON, an SSE stream (carrying server requests and
notifications before the response), or 202 for notifications and responses. A standalone GET SSE
stream carries server-initiated messages. Cut streams are resumed with ``Last-Event-ID`` after the
server's ``retry:`` delay. ``Mcp-Session-Id`` is taken from any answer and sent back; DELETE ends it.

On the stateless 2026-07-28 wire there is none of that: no session, no GET stream, no resumption;
every POST carries ``MCP-Protocol-Version`` plus the per-message headers the session computes
(``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``), and closing an answer's stream cancels its request.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from ..errors import (ConnectionFailed, HTTPStatusError, InvalidMessage, MCPError,
                      ServerUnreachable, SessionExpired)
from ..protocol import jsonrpc
from ..protocol.jsonrpc import ErrorResponse, RequestId, Response
from ..redact import register_all, register_url, safe_url, scrub
from .base import Transport, TransportEvents
from .sse import SSEParser, iter_events

DEFAULT_RETRY_MS = 1000
MAX_RESUME_ATTEMPTS = 5
MAX_LISTEN_BACKOFF_S = 30.0
LISTEN_OPEN_WAIT_S = 5.0
SSE = "text/event-stream"
#: Ordinary exchanges in flight at once (a POST until its answer's headers, and a JSON answer's
#: body). httpcore's pool does work in proportion to connections² on every request, so hundreds of
#: polls let loose each open a connection and make every request dearer, until the client cannot
#: keep up; queued here instead, they wait at no cost. Streams (SSE) hold no slot once open.
MAX_EXCHANGES = 8
#: An exchange still waiting after this long (a server that holds back a blocking answer) gives
#: its slot back, so that slow requests never starve the others.
SLOT_HOLD_S = 2.0
MAX_CONNECTIONS = 256


def _ctype(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class StreamableHTTPTransport(Transport):
    """Talks to an MCP server at ``url``; ``headers`` (e.g. a bearer token) go on every request."""

    kind = "http"
    carries_headers = True

    def __init__(self, url: str, *, headers: dict[str, str] | None = None,
                 connect_timeout: float = 10.0) -> None:
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
        self._rebuild_headers()

    # -- headers -------------------------------------------------------------------------------

    def _rebuild_headers(self) -> None:
        common = dict(self._user_headers)
        if self.session_id:
            common["Mcp-Session-Id"] = self.session_id
        if self._protocol_version:
            common["MCP-Protocol-Version"] = self._protocol_version
        self._post_headers = {**common, "Accept": f"application/json, {SSE}",
                              "Content-Type": "application/json"}
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
            follow_redirects=False)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = list(self._background) + ([self._listener] if self._listener else [])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
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
            return ServerUnreachable(f"cannot connect to {self.label}: {exc or 'connection refused'}",
                                     server=self.server_name)
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
            # The server went away mid-exchange (a restart closes its connections).
            return ServerUnreachable(f"the connection to {self.label} broke: {type(exc).__name__}: {exc}",
                                     server=self.server_name)
        if isinstance(exc, httpx.TimeoutException):
            return ConnectionFailed(f"timed out talking to {self.label} ({type(exc).__name__})",
                                    server=self.server_name)
        return ConnectionFailed(f"HTTP failure talking to {self.label}: {type(exc).__name__}: {exc}",
                                server=self.server_name)

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        client, events = self._client, self._events
        if client is None or events is None or self._closed:
            raise ConnectionFailed("the connection is closed", server=self.server_name)
        msg_id: RequestId | None = message.get("id") if "method" in message else None
        request = client.build_request("POST", self.url, content=jsonrpc.encode(message),
                                       headers={**self._post_headers, **headers} if headers
                                       else self._post_headers)
        slot = await _Slot.take(self._slots)
        try:
            await self._exchange(client, events, request, message, msg_id)
        finally:
            slot.release()

    async def _exchange(self, client: httpx.AsyncClient, events: TransportEvents, request: httpx.Request,
                        message: dict[str, Any], msg_id: RequestId | None) -> None:
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from None
        try:
            self._note_session(response)
            status = response.status_code
            if status >= 400:
                await self._raise_status(response, msg_id, message.get("method"))
                return
            if msg_id is None:
                return  # 202 (or any 2xx) for a notification or a response
            ctype = _ctype(response)
            if ctype == SSE:
                self._read_in_background(response, msg_id)
                response = None  # the stream reader owns it now
                return
            if ctype != "application/json":
                raise InvalidMessage(f"answer to {message.get('method')} has content type "
                                     f"{ctype or 'none'!r} (HTTP {status})", server=self.server_name)
            body = await response.aread()
            try:
                messages = jsonrpc.decode(body)
            except jsonrpc.MessageError as exc:
                raise InvalidMessage(f"unreadable answer to {message.get('method')}: {exc}",
                                     server=self.server_name) from None
            for msg in messages:
                events.message_received(msg)
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from None
        finally:
            if response is not None:
                await response.aclose()

    async def _raise_status(self, response: httpx.Response, msg_id: RequestId | None,
                            method: str | None) -> None:
        body = (await response.aread())[:2000]
        status = response.status_code
        # A JSON-RPC error for this very request is the most precise answer there is.
        if _ctype(response) == "application/json" and msg_id is not None:
            try:
                for msg in jsonrpc.decode(body):
                    if isinstance(msg, ErrorResponse) and msg.id in (msg_id, None):
                        msg.id = msg_id
                        assert self._events is not None
                        self._events.message_received(msg)
                        return
            except jsonrpc.MessageError:
                pass
        if status == 404 and self.session_id:
            raise SessionExpired(f"HTTP 404 for session {self.session_id}: the server ended the session",
                                 server=self.server_name)
        text = scrub(body.decode(errors="replace").strip())  # before the cut below, which could split a secret
        raise HTTPStatusError(f"HTTP {status} {response.reason_phrase} for {method or 'message'}"
                              + (f": {text[:300]}" if text else ""),
                              server=self.server_name, status_code=status, body=text)

    # -- SSE streams ---------------------------------------------------------------------------

    def _deliver_event(self, data: str) -> list[Any]:
        assert self._events is not None
        if not data.strip():
            return []  # a priming event: only an id (and perhaps retry)
        try:
            messages = jsonrpc.decode(data)
        except jsonrpc.MessageError as exc:
            self._events.noise_received(InvalidMessage(f"unreadable SSE event: {exc}", server=self.server_name))
            return []
        for msg in messages:
            self._events.message_received(msg)
        return messages

    async def _read_post_stream(self, response: httpx.Response, msg_id: RequestId) -> None:
        """Read a POST's SSE answer until the response arrives; resume it if the stream is cut."""
        assert self._events is not None and self._client is not None
        parser = SSEParser()
        attempts = 0
        while True:
            try:
                async for event in iter_events(response.aiter_lines(), parser):
                    for msg in self._deliver_event(event.data):
                        if isinstance(msg, (Response, ErrorResponse)) and msg.id == msg_id:
                            return
            except httpx.HTTPError:
                pass
            finally:
                await response.aclose()
            if self._closed:
                return
            if parser.last_event_id is None or self.stateless:
                self._events.request_failed(msg_id, ConnectionFailed(
                    "the SSE stream closed before the answer arrived, and it cannot be resumed "
                    + ("(the stateless wire has no resumption)" if self.stateless
                       else "(it carried no event id)"), server=self.server_name))
                return
            attempts += 1
            if attempts > MAX_RESUME_ATTEMPTS:
                self._events.request_failed(msg_id, ConnectionFailed(
                    f"the SSE stream was cut {attempts} times before the answer arrived",
                    server=self.server_name))
                return
            await asyncio.sleep((parser.retry_ms if parser.retry_ms is not None
                                 else DEFAULT_RETRY_MS) / 1000)
            try:
                response = await self._open_get(parser.last_event_id)
            except MCPError as exc:
                self._events.request_failed(msg_id, exc)
                return

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
        if response.status_code != 200 or _ctype(response) != SSE:
            await response.aclose()
            raise HTTPStatusError(f"GET for the event stream answered HTTP {response.status_code}",
                                  server=self.server_name, status_code=response.status_code)
        return response

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
        parser = SSEParser()
        try:
            await self._listen_loop(parser, first_try)
        finally:
            if not first_try.done():
                first_try.set_result(None)

    async def _listen_loop(self, parser: SSEParser, first_try: asyncio.Future[None]) -> None:
        backoff = 0.0
        while not self._closed:
            try:
                response = await self._open_get(parser.last_event_id)
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
                try:
                    async for event in iter_events(response.aiter_lines(), parser):
                        self._deliver_event(event.data)
                except httpx.HTTPError:
                    pass
                finally:
                    await response.aclose()
                self.listening = False
                delay = (parser.retry_ms if parser.retry_ms is not None else DEFAULT_RETRY_MS) / 1000
            else:
                backoff = min(MAX_LISTEN_BACKOFF_S, max(1.0, backoff * 2))
                delay = backoff
            await asyncio.sleep(delay)

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
