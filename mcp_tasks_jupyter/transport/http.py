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

The HTTP engine is aiohttp, chosen by measurement (BENCHMARKS.md: its exchange costs about a
quarter of httpx's here): HTTP parsing, the connection pool, TLS and proxies are its. One
``aiohttp.ClientSession`` per transport, made in ``start``. Nothing is built per poll that can be
built once: the URL is parsed once, the headers of every POST and GET are built in one place
(``_rebuild_headers``) and again only when what goes in them changes, the proxy (``HTTP_PROXY``,
``HTTPS_PROXY``, ``NO_PROXY``) is read from the environment once, and the exchange slots share one
timer (``_Slots``) instead of arming one per request. Every answer status of 400 and above goes
through one place (``_raise_status``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp
from multidict import CIMultiDict
from yarl import URL

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
from .base import Jobs, Transport, TransportEvents
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
#: Server messages on the GET stream handled back to back before the loop gets a turn (issue 24: a
#: thousand tasks' notifications read in one chunk held a cell for tens of milliseconds).
EVENTS_PER_SLICE = 32
LISTEN_OPEN_WAIT_S = 5.0
#: Ordinary exchanges in flight at once (a POST until its answer's headers, and a JSON answer's
#: body). Hundreds of polls let loose would each open a connection (and the server would juggle
#: them all); queued here instead, they wait at no cost and reuse a few kept-alive connections.
#: Streams (SSE) hold no slot once open.
MAX_EXCHANGES = 8
#: An exchange still waiting after this long (a server that holds back a blocking answer) gives
#: its slot back, so that slow requests never starve the others.
SLOT_HOLD_S = 2.0
MAX_CONNECTIONS = 256
#: How long a POST's SSE reader, its answer in hand, reads on for the end of the stream (servers end it
#: right after the answer). A stream read to its end gives its connection back to the pool; one cut short
#: must close it, and a sweep of short tasks then opened a new connection for nearly every call.
STREAM_END_WAIT_S = 1.0
#: Errors of the HTTP engine while talking (what ``_connection_error`` turns into ours).
_ENGINE_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError)


class _ClosedHere(aiohttp.ClientConnectionError):
    """Put into an answer being read when the transport closes: closing aiohttp's session drops the
    connection without telling a body being read, which then waits without end (or, read a moment
    later, raises a bare ``RuntimeError``)."""


def _answers(messages: list[Any], msg_id: RequestId) -> bool:
    """Whether ``messages`` hold the answer to request ``msg_id``."""
    return any(isinstance(msg, (Response, ErrorResponse)) and msg.id == msg_id for msg in messages)


def _resume_id(position: StreamPosition) -> str | None:
    """The id to resume a stream from, if it can go in a header (printable ASCII: an event id is any text)."""
    event_id = position.last_event_id
    return event_id if event_id is not None and event_id.isascii() and event_id.isprintable() else None


def _env_proxy(url: URL) -> str | None:
    """The proxy the environment names for ``url`` (``HTTP(S)_PROXY``, less ``NO_PROXY``), if any."""
    host = url.host or ""
    if urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(url.scheme)


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
        parsed = URL(url)  # parsed once
        #: The URL's userinfo goes as Basic credentials (as httpx sent it), unless the user's headers
        #: carry an Authorization of their own.
        self._url_auth = (
            aiohttp.encode_basic_auth(parsed.user or "", parsed.password or "")
            if parsed.raw_user or parsed.raw_password
            else None
        )
        self._url = parsed.with_user(None)
        self._user_headers = dict(headers or {})
        self._connect_timeout = connect_timeout
        self._client: aiohttp.ClientSession | None = None
        self._proxy: str | None = None
        self._events: TransportEvents | None = None
        self.session_id: str | None = None
        self._protocol_version: str | None = None
        self._post_headers: CIMultiDict[str] = CIMultiDict()
        self._get_headers: CIMultiDict[str] = CIMultiDict()
        self._jobs: Jobs | None = None  # the transport's group, a child of the connection's (``start``)
        self._listener: asyncio.Task[None] | None = None
        #: The reader of each request's SSE answer (so that a withdrawn request closes its stream).
        self._streams: dict[RequestId, asyncio.Task[None]] = {}
        #: Answers a request is reading now (``close`` ends their reads).
        self._reading: set[aiohttp.ClientResponse] = set()
        self._listening = False
        self.stateless = False
        self._closed = False
        self._slots = _Slots(MAX_EXCHANGES, SLOT_HOLD_S)
        #: Where credentials come from beyond ``headers`` (OAuth); its headers win over the user's.
        self.auth = auth
        #: Headers of each request's own (a DPoP proof), when the hook has them: asked per request.
        self._per_request: Callable[[str, str], Mapping[str, str] | None] | None = getattr(
            auth, "request_headers", None
        )
        self._url_text = str(self._url)
        if auth is not None:
            auth.on_change(self._rebuild_headers)
        self._rebuild_headers()

    @property
    def listening(self) -> bool:
        """Whether the standalone GET stream is open."""
        return self._listening

    @listening.setter
    def listening(self, value: bool) -> None:
        if value != self._listening:
            self._listening = value
            if self.on_channel_change is not None:
                self.on_channel_change()

    @property
    def push_channel_open(self) -> bool:
        return self._listening

    # -- headers -------------------------------------------------------------------------------

    def _rebuild_headers(self) -> None:
        """The headers of every POST and GET, built here and only here (once per change of what
        goes in them: the user's headers, the auth hook's, the session id, the protocol version)."""
        common = CIMultiDict(self._user_headers)
        if self.auth is not None:
            common.update(self.auth.headers())
        if self._url_auth is not None and "Authorization" not in common:
            common["Authorization"] = self._url_auth
        if self.session_id:
            common["Mcp-Session-Id"] = self.session_id
        if self._protocol_version:
            common["MCP-Protocol-Version"] = self._protocol_version
        post = common.copy()
        post["Accept"] = f"application/json, {SSE}"
        post["Content-Type"] = "application/json"
        get = common
        get["Accept"] = SSE
        self._post_headers, self._get_headers = post, get

    def _note_session(self, response: aiohttp.ClientResponse) -> None:
        if self.stateless:
            return  # the 2026-07-28 wire has no sessions: never echo one
        sid = response.headers.get("Mcp-Session-Id")
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
        self._jobs = events.background.child(f"{self.label} (transport)")
        if self.auth is not None:
            self.auth.attach(self._jobs)
        self._proxy = _env_proxy(self._url)
        self._client = aiohttp.ClientSession(
            # Keep-alive as many as may be open (streams hold one each); no per-host cap below it.
            connector=aiohttp.TCPConnector(limit=MAX_CONNECTIONS, limit_per_host=0),
            # No overall bound: a stream lives as long as it lives; a request's own timeout is the
            # session's (``Session.request``). Connecting (a pool slot included) is bounded here.
            timeout=aiohttp.ClientTimeout(total=None, connect=self._connect_timeout),
            # The environment is read once above: aiohttp's trust_env reads it on every request.
            trust_env=False,
            # Answers are read bounded through ``content``; no raise on 4xx/5xx (``_raise_status``).
            raise_for_status=False,
        )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._jobs is not None:
            await self._jobs.aclose()  # the listener and every stream reader
        for response in self._reading:
            response.content.set_exception(_ClosedHere())
        self._slots.close()
        if self.auth is not None:
            await self.auth.aclose()
        client = self._client
        if client is None:
            return
        if self.session_id:
            headers = self._get_headers
            own = self._per_request("DELETE", self._url_text) if self._per_request is not None else None
            if own:
                headers = headers.copy()
                headers.update(own)
            try:
                async with client.delete(
                    self._url,
                    headers=headers,
                    proxy=self._proxy,
                    timeout=aiohttp.ClientTimeout(total=2.0),
                ):
                    pass
            except _ENGINE_ERRORS:
                pass
        await client.close()

    def _read_in_background(self, response: aiohttp.ClientResponse, msg_id: RequestId) -> None:
        assert self._jobs is not None
        reader = self._jobs.spawn(self._read_post_stream(response, msg_id), name=f"mcp-stream {msg_id}")
        self._streams[msg_id] = reader

        def done(task: asyncio.Task[None]) -> None:
            if self._streams.get(msg_id) is task:
                del self._streams[msg_id]

        reader.add_done_callback(done)

    # -- sending -------------------------------------------------------------------------------

    def _connection_error(self, exc: BaseException) -> ConnectionFailed:
        if isinstance(exc, asyncio.TimeoutError):  # aiohttp's own (connecting): not the session's
            return ConnectionFailed(
                f"timed out talking to {self.label} ({type(exc).__name__})", server=self.server_name
            )
        if isinstance(exc, _ClosedHere):
            why = "was closed here while its answer was read"
            return ConnectionFailed(f"the connection to {self.label} {why}", server=self.server_name)
        if isinstance(exc, aiohttp.ClientConnectorError):
            why = exc.os_error.strerror or str(exc.os_error) or "connection refused"
            return ServerUnreachable(f"cannot connect to {self.label}: {why}", server=self.server_name)
        if isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)):
            # The server went away mid-exchange (a restart closes its connections).
            return ServerUnreachable(
                f"the connection to {self.label} broke: {type(exc).__name__}: {exc}", server=self.server_name
            )
        return ConnectionFailed(
            f"HTTP failure talking to {self.label}: {type(exc).__name__}: {exc}", server=self.server_name
        )

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        client, events = self._client, self._events
        if client is None or events is None or self._closed:
            raise ConnectionFailed("the connection is closed", server=self.server_name)
        msg_id: RequestId | None = message.get("id") if "method" in message else None
        sent: CIMultiDict[str] = self._post_headers
        own = self._per_request("POST", self._url_text) if self._per_request is not None else None
        if headers or own:
            sent = sent.copy()
            sent.update(headers or {})
            sent.update(own or {})
        slot = await self._slots.take()
        try:
            await self._exchange(client, events, jsonrpc.encode(message), sent, message, msg_id)
        finally:
            self._slots.give_back(slot)

    async def _exchange(
        self,
        client: aiohttp.ClientSession,
        events: TransportEvents,
        body: bytes,
        headers: CIMultiDict[str],
        message: dict[str, Any],
        msg_id: RequestId | None,
    ) -> None:
        try:
            response = await client.post(
                self._url, data=body, headers=headers, proxy=self._proxy, allow_redirects=False
            )
        except _ENGINE_ERRORS as exc:
            raise self._connection_error(exc) from None
        owned = True  # this exchange closes the response, unless a stream reader takes it
        self._reading.add(response)
        if self._closed:  # closed while the request went out: its connection is gone
            response.content.set_exception(_ClosedHere())
        try:
            self._note_session(response)
            status = response.status
            if status >= 400:
                await self._raise_status(response, msg_id, message.get("method"), headers.get("Mcp-Session-Id"))
                return
            if msg_id is None:
                return  # 202 (or any 2xx) for a notification or a response
            if content_type(response) == SSE:
                self._read_in_background(response, msg_id)
                owned = False  # the stream reader owns it now
                return
            for msg in await read_json(response, message.get("method"), self.server_name):
                events.message_received(msg)
        except _ENGINE_ERRORS as exc:
            raise self._connection_error(exc) from None
        finally:
            self._reading.discard(response)
            if owned:
                response.release()  # back to the pool when read to its end; else the connection closes

    async def _raise_status(
        self,
        response: aiohttp.ClientResponse,
        msg_id: RequestId | None,
        method: str | None,
        session_id: str | None,
    ) -> None:
        """Every answer status of 400 and above, POST or GET, is judged here; ``session_id`` is the
        session the request named (the current one may already be reset by a renewal meanwhile)."""
        status = response.status
        body, more = await read_at_most(response, MAX_ERROR_BODY_BYTES)
        if status in (401, 403):
            raise self._auth_failure(response, method or "message", body, more)
        if status == 404 and session_id:
            # Before any JSON-RPC error in the body: servers (the SDKs, the demo) answer a session they do
            # not know with 404 and an error object, and that is a lost session to renew, not the request's
            # own failure.
            raise SessionExpired(
                f"HTTP 404 for session {session_id}: the server ended the session", server=self.server_name
            )
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
        text = body_text(body, more)  # secrets scrubbed before the cut, which could split one
        raise HTTPStatusError(
            f"HTTP {status} {printable(response.reason or '', 60)} for {method or 'message'}"
            + (f": {text}" if text else ""),
            server=self.server_name,
            status_code=status,
            body=text,
        )

    def _auth_failure(
        self, response: aiohttp.ClientResponse, what: str, body: bytes, more: bool
    ) -> AuthenticationFailed:
        names = tuple(self._user_headers) + (tuple(self.auth.headers()) if self.auth is not None else ())
        return auth_failure(response, what, body_text(body, more), names, self.server_name)

    # -- SSE streams ---------------------------------------------------------------------------

    def _deliver_event(self, data: str) -> list[Any] | InvalidMessage:
        """Hand an event's messages to the session and return them.

        An unreadable event that names the request it answers (its own ``id``, as with ``1e400``) fails
        that request at once; the ErrorResponse returned for it tells a POST's reader its answer has come.
        One that names nothing is noise (a comment-like line, ``data: not json``, an array, ...): it is
        reported and returned, so a POST's reader can give it as the reason should its stream end without
        the answer, but the stream goes on (a server may well send its answer next).
        """
        assert self._events is not None
        if not data.strip():
            return []  # a priming event: only an id (and perhaps retry)
        try:
            messages = jsonrpc.decode(data)
        except (jsonrpc.MessageError, RecursionError) as exc:
            why = exc if isinstance(exc, jsonrpc.MessageError) else "nested too deeply"
            error = InvalidMessage(
                f"unreadable SSE event ({len(data)} characters): {why}; it begins {quote(data)}",
                server=self.server_name,
            )
            answered = jsonrpc.answered_id(data)
            if answered is None:
                self._events.noise_received(error)
                return error
            self._events.request_failed(answered, error)
            return [ErrorResponse(answered, jsonrpc.PARSE_ERROR, str(error))]
        for msg in messages:
            self._events.message_received(msg)
        return messages

    async def _read_post_stream(self, response: aiohttp.ClientResponse, msg_id: RequestId) -> None:
        """Read a POST's SSE answer until the response arrives; resume it if the stream is cut."""
        assert self._events is not None and self._client is not None
        position = StreamPosition()
        attempts = 0
        noise: InvalidMessage | None = None  # the last unreadable event naming no request, if any
        answered = False
        while True:
            try:
                async with (
                    asyncio.timeout(None) as stream_end,
                    contextlib.aclosing(self._events_of(response, position)) as events,
                ):
                    async for event in events:
                        delivered = self._deliver_event(event.data)
                        if isinstance(delivered, InvalidMessage):
                            noise = delivered
                            continue
                        if not answered and _answers(delivered, msg_id):
                            answered = True  # read on (briefly) to the stream's end: see STREAM_END_WAIT_S
                            stream_end.reschedule(asyncio.get_running_loop().time() + STREAM_END_WAIT_S)
            except _ENGINE_ERRORS:  # the stream's end not come in time is one (a TimeoutError)
                pass
            except InvalidMessage as exc:  # an event past the size bound: resuming would send it again
                if not answered:
                    self._events.request_failed(msg_id, exc)
                return
            finally:
                # Read to its end, its connection goes back to the pool; else it is closed, which is also
                # how a stream is withdrawn.
                response.release()
            if answered or self._closed:
                return
            resume_from = _resume_id(position)
            if resume_from is None or self.stateless:
                why = (
                    "the stateless wire has no resumption"
                    if self.stateless
                    else "it carried no event id"
                    if position.last_event_id is None
                    else "its event id cannot go in a Last-Event-ID header"
                )
                self._events.request_failed(msg_id, self._stream_ended(why, noise))
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

    def _stream_ended(self, why: str, noise: InvalidMessage | None) -> MCPError:
        """Why a POST's request failed when its stream ended unanswered: the unreadable event it carried,
        if any (most likely the answer itself), else the closed stream."""
        if noise is not None:
            return InvalidMessage(
                f"the SSE stream ended without the answer ({why}); it carried an {noise.detail}",
                server=self.server_name,
            )
        return ConnectionFailed(
            f"the SSE stream closed before the answer arrived, and it cannot be resumed ({why})",
            server=self.server_name,
        )

    def _events_of(self, response: aiohttp.ClientResponse, position: StreamPosition) -> Any:
        return read_events(response.content.iter_any(), position, server=self.server_name)

    async def _open_get(self, last_event_id: str | None) -> aiohttp.ClientResponse:
        assert self._client is not None
        headers = self._get_headers
        own = self._per_request("GET", self._url_text) if self._per_request is not None else None
        if last_event_id is not None or own:
            headers = headers.copy()
            headers.update(own or {})
            if last_event_id is not None:
                headers["Last-Event-ID"] = last_event_id
        try:
            response = await self._client.get(self._url, headers=headers, proxy=self._proxy, allow_redirects=False)
        except _ENGINE_ERRORS as exc:
            raise self._connection_error(exc) from None
        status = response.status
        if status == 200 and content_type(response) == SSE:
            return response
        try:
            if status in (401, 403):
                await self._raise_status(response, None, "the event stream (GET)", headers.get("Mcp-Session-Id"))
        except _ENGINE_ERRORS as exc:
            raise self._connection_error(exc) from None
        finally:
            response.close()
        raise HTTPStatusError(
            f"GET for the event stream answered HTTP {status}", server=self.server_name, status_code=status
        )

    async def open_listener(self) -> None:
        """Open the standalone GET stream and wait (briefly) until the server took it or refused it.

        Waiting matters: servers drop messages meant for a stream that is not open yet.
        """
        if self._listener is None and not self._closed and not self.stateless:
            first_try = asyncio.get_running_loop().create_future()
            assert self._jobs is not None
            self._listener = self._jobs.spawn(self._listen(first_try), name=f"mcp-listen {self.label}")
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
                        delivered = 0
                        async for event in events:
                            self._deliver_event(event.data)
                            delivered += 1
                            if delivered % EVENTS_PER_SLICE == 0:
                                await asyncio.sleep(0)  # a burst read at once: let the loop run between slices
                except _ENGINE_ERRORS:
                    pass
                except InvalidMessage as exc:  # an event past the size bound
                    assert self._events is not None
                    self._events.noise_received(exc)
                    backoff = delay = MAX_LISTEN_BACKOFF_S  # it would come again at once
                finally:
                    response.close()
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


class _Slots:
    """The transport's exchange slots: at most ``size`` exchanges at once; a slot is given back when
    its exchange ends, or once it was held ``hold_s``, whichever comes first.

    One timer serves every slot (not one armed and cancelled per exchange): slots are taken in time
    order, so the oldest held slot is the first to overstay; the timer is armed for it, and when it
    fires it frees every slot held too long and is armed again for the next oldest, if any.
    """

    __slots__ = ("_free", "_held", "_hold_s", "_loop", "_timer", "_waiters")

    def __init__(self, size: int, hold_s: float) -> None:
        self._free = size
        self._hold_s = hold_s
        #: Held slots in the order they were taken: [taken at, still held].
        self._held: collections.deque[list[Any]] = collections.deque()
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def take(self) -> list[Any]:
        """A slot (give it back with ``give_back``); waits while all are held."""
        loop = self._loop = self._loop or asyncio.get_running_loop()
        if self._free <= 0 or self._waiters:
            waiter = loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter  # a freed slot is handed over: _free was not raised for it
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._release()  # handed over as we were cancelled: pass it on
                else:
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(waiter)
                raise
        else:
            self._free -= 1
        slot = [loop.time(), True]
        self._held.append(slot)
        if self._timer is None:
            self._timer = loop.call_at(slot[0] + self._hold_s, self._expire)
        return slot

    def give_back(self, slot: list[Any]) -> None:
        if slot[1]:
            slot[1] = False
            self._release()

    def _release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1

    def _expire(self) -> None:
        self._timer = None
        assert self._loop is not None
        held, now = self._held, self._loop.time()
        while held and (not held[0][1] or held[0][0] + self._hold_s <= now):
            self.give_back(held.popleft())
        if held:
            self._timer = self._loop.call_at(held[0][0] + self._hold_s, self._expire)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
