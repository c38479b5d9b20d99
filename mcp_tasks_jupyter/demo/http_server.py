"""The Streamable HTTP transport: one endpoint, ``/mcp``, served by uvicorn, for every dialect.

* POST: one JSON-RPC message. ``Accept`` must list ``application/json`` and
  ``text/event-stream`` (406), ``Content-Type`` must be ``application/json`` (415), the body
  must be JSON (400, -32700).
* Legacy sessions (2025-11-25 and sep1686): ``initialize`` opens a session and answers with an
  ``Mcp-Session-Id`` header; every later message needs that header (400 without, 404 if
  unknown). Notifications and responses get 202. Requests get an ``application/json`` answer,
  except those whose messages travel with them (2025-11-25 ``tasks/result``, a sep1686
  task-augmented ``tools/call``: see ``response_stream_task``), which get a
  ``text/event-stream`` carrying the task's server requests (``elicitation/create``) and
  notifications, then the response. An ``MCP-Protocol-Version`` header naming a version the
  session does not speak gets 400.
* GET (legacy): the standalone SSE stream of the session (409 if one is open already), or the
  resumption of any stream of the session with ``Last-Event-ID``.
* DELETE (legacy): ends the session (200); its tasks live on in the shared store.
* Stateless 2026-07-28 (ext): a POST without ``Mcp-Session-Id`` that is not ``initialize`` and
  carries the 2026-07-28 ``_meta`` or a non-legacy ``MCP-Protocol-Version`` header (any POST
  with ``--dialect ext``). No session is made or needed. Header, ``_meta`` and version problems
  are 400 (-32020, -32602, -32022), an unknown method 404 (-32601), a missing capability 400
  (-32021). The answer is JSON, or an SSE stream (no event ids, not resumable) for
  ``subscriptions/listen`` and for requests whose ``_meta`` asks for progress or log messages;
  closing that stream cancels the request.

An ``Origin`` header that is not a loopback or the bound host gets 403 (DNS rebinding protection).

With ``--auth`` (:mod:`.auth_http`) every request to ``/mcp`` first needs a Bearer token from the
demo's own authorization server, served on the same origin (401/403 otherwise).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .auth_http import DemoAuth
from .auth_server import AuthSettings
from .http_session import HttpSession, SseConnection, StreamBusy, UnknownEventId
from .protocol_2025 import SUPPORTED_VERSIONS
from .protocol_2026 import Stateless2026
from .rpc import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    UNSUPPORTED_PROTOCOL_VERSION,
    make_error,
    message_kind,
)
from .server import DemoServer

logger = logging.getLogger("mcp_tasks_jupyter.demo")

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def _http_error(status: int, message: str, code: int = INVALID_REQUEST) -> JSONResponse:
    """An HTTP error whose body is a JSON-RPC error without an id."""
    return JSONResponse(make_error(None, code, message), status_code=status)


def _accepts(header: str, media_type: str) -> bool:
    """Whether an ``Accept`` header lists ``media_type`` (or ``*/*``)."""
    for part in header.split(","):
        value = part.split(";")[0].strip().lower()
        if value in (media_type, "*/*"):
            return True
    return False


def _stateless_status(error_code: int, prechecked: bool) -> int:
    """The HTTP status of a 2026-07-28 error response."""
    if error_code == METHOD_NOT_FOUND:
        return 404
    if error_code in (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION):
        return 400
    return 400 if prechecked else 200  # a malformed request (e.g. _meta missing) vs. a failed call


class _SseStream:
    """The :class:`~.protocol_2026.Stream` of one stateless request answered with SSE."""

    def __init__(self, connection: SseConnection) -> None:
        self.connection = connection

    def send(self, message: dict[str, Any], *, task_id: str | None = None) -> None:
        self.connection.put(f"event: message\ndata: {json.dumps(message, separators=(',', ':'))}\n\n")


class McpHttpApp:
    """The ASGI application: session table plus the GET/POST/DELETE handlers of ``/mcp``."""

    def __init__(self, server: DemoServer, *, bound_host: str = "127.0.0.1", auth: DemoAuth | None = None) -> None:
        self.server = server
        self.auth = auth
        self.sessions: dict[str, HttpSession] = {}
        self._stateless_streams: set[SseConnection] = set()
        self._allowed_origin_hosts = LOOPBACK_HOSTS | {bound_host.strip("[]").lower()}
        routes = [Route("/mcp", self.endpoint, methods=["GET", "POST", "DELETE"])]
        self.asgi = Starlette(routes=routes + (auth.routes if auth is not None else []))

    async def endpoint(self, request: Request) -> Response:
        """Route one request on ``/mcp``."""
        origin = request.headers.get("origin")
        if origin is not None and (urlsplit(origin).hostname or "").lower() not in self._allowed_origin_hosts:
            return _http_error(403, f"Forbidden origin: {origin}")
        if self.auth is not None:
            refused = await self.auth.guard(request)
            if refused is not None:
                return refused
        if request.method == "POST":
            return await self._post(request)
        refused = self._check_version(request)
        if refused is not None:
            return refused
        if request.method == "GET":
            return self._get(request)
        return self._delete(request)

    @staticmethod
    def _check_version(request: Request) -> Response | None:
        version = request.headers.get(VERSION_HEADER)
        if version is not None and version not in SUPPORTED_VERSIONS:
            return _http_error(
                400, f"Unsupported {VERSION_HEADER}: {version}; supported: {', '.join(SUPPORTED_VERSIONS)}"
            )
        return None

    def _is_stateless(self, request: Request, message: Any) -> bool:
        """Whether a POST is for the stateless 2026-07-28 handler (see the module docstring)."""
        if self.server.modern is None or request.headers.get(SESSION_HEADER):
            return False
        if isinstance(message, dict) and message.get("method") == "initialize":
            return False
        version = request.headers.get(VERSION_HEADER)
        return (
            self.server.config.dialect == "ext"
            or (version is not None and version.strip() not in SUPPORTED_VERSIONS)
            or self.server.is_modern(message)
        )

    def _session(self, request: Request) -> HttpSession | Response:
        session_id = request.headers.get(SESSION_HEADER)
        if not session_id:
            return _http_error(400, f"Bad Request: missing {SESSION_HEADER} header (initialize first)")
        session = self.sessions.get(session_id)
        if session is None:
            return _http_error(404, "Session not found (it ended or never existed); initialize a new one")
        return session

    async def _post(self, request: Request) -> Response:
        accept = request.headers.get("accept", "")
        if not (_accepts(accept, JSON_TYPE) and _accepts(accept, SSE_TYPE)):
            return _http_error(406, f"Not Acceptable: Accept must list both {JSON_TYPE} and {SSE_TYPE}")
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != JSON_TYPE:
            return _http_error(415, f"Unsupported Media Type: Content-Type must be {JSON_TYPE}")
        try:
            message = json.loads(await request.body())
        except ValueError:
            return _http_error(400, "Parse error: the body is not valid JSON", PARSE_ERROR)
        if isinstance(message, list):
            return _http_error(400, "Batches are not supported: send one JSON-RPC message per POST")
        kind = message_kind(message)
        if self._is_stateless(request, message):
            return await self._stateless(request, message, kind)
        initialize = kind == "request" and message["method"] == "initialize"
        if initialize and not self.server.serves_legacy:
            return JSONResponse(self.server.refuse_initialize(message), status_code=400)
        refused = self._check_version(request)
        if refused is not None:
            return refused
        if initialize:
            return await self._initialize(message)
        session = self._session(request)
        if isinstance(session, Response):
            return session
        assert session.protocol is not None
        if kind == "invalid":
            return JSONResponse(await session.protocol.handle(message), status_code=400)
        if kind in ("notification", "response"):
            await session.protocol.handle(message)
            return Response(status_code=202)
        self.server.follow(session.protocol, message)
        stream_task = session.protocol.response_stream_task(message)
        if stream_task is not None:
            return self._streamed(session, message, stream_task or None)
        response = await session.protocol.handle(message)
        if response is None:  # cancelled by the client; an HTTP answer is still due
            response = make_error(message["id"], REQUEST_CANCELLED, "Request cancelled by the client")
        return JSONResponse(response)

    async def _stateless(self, request: Request, message: Any, kind: str) -> Response:
        modern = self.server.modern
        assert modern is not None
        if kind in ("notification", "response"):
            return Response(status_code=202)  # nothing to do: the stateless protocol has no session
        if kind == "invalid":
            return JSONResponse(await modern.handle(message), status_code=400)
        problem = modern.precheck(message, request.headers)
        if problem is not None:
            status = _stateless_status(problem.code, prechecked=True)
            error = {"jsonrpc": "2.0", "id": message["id"], "error": problem.to_error()}
            return JSONResponse(error, status_code=status)
        if Stateless2026.streams(message):
            return self._stateless_stream(modern, message)
        response = await modern.handle(message, prechecked=True)
        assert response is not None
        status = _stateless_status(response["error"]["code"], prechecked=False) if "error" in response else 200
        return JSONResponse(response, status_code=status)

    def _stateless_stream(self, modern: Stateless2026, message: dict[str, Any]) -> StreamingResponse:
        """Answer a stateless request with SSE: its notifications, then its response."""
        connection = SseConnection()
        self._stateless_streams.add(connection)
        stream = _SseStream(connection)

        async def answer() -> None:
            try:
                response = await modern.handle(message, stream, prechecked=True)
                if response is not None:
                    stream.send(response)
            finally:
                connection.close()

        runner = asyncio.get_running_loop().create_task(answer())

        async def body() -> AsyncIterator[str]:
            try:
                async for chunk in connection.chunks():
                    yield chunk
            finally:  # the client went away (or the answer is out): closing the stream cancels
                self._stateless_streams.discard(connection)
                if not runner.done():
                    runner.cancel()

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(body(), media_type=SSE_TYPE, headers=headers)

    async def _initialize(self, message: dict[str, Any]) -> Response:
        session_id = secrets.token_urlsafe(24)
        session = HttpSession(session_id)
        session.protocol = self.server.open_session(session, message)
        response = await session.protocol.handle(message)
        assert response is not None
        if "error" in response:
            session.close()
            return JSONResponse(response)
        self.sessions[session_id] = session
        logger.info("HTTP session %s opened", session_id)
        return JSONResponse(response, headers={SESSION_HEADER: session_id})

    def _streamed(self, session: HttpSession, message: dict[str, Any], task_id: str | None) -> Response:
        """Answer a legacy request with an SSE stream that carries its task's messages, then
        the response (2025-11-25 ``tasks/result``, sep1686 task-augmented ``tools/call``)."""
        stream, connection = session.open_result_stream(task_id)
        assert session.protocol is not None
        protocol = session.protocol

        async def answer() -> None:
            response = None
            try:
                response = await protocol.handle(message)
            finally:
                session.finish_result_stream(stream, response)

        session.run_in_background(answer())
        return self._sse(session, connection)

    def _get(self, request: Request) -> Response:
        if not _accepts(request.headers.get("accept", ""), SSE_TYPE):
            return _http_error(406, f"Not Acceptable: Accept must list {SSE_TYPE}")
        session = self._session(request)
        if isinstance(session, Response):
            return session
        try:
            connection = session.connect(request.headers.get("last-event-id"))
        except StreamBusy:
            return _http_error(409, "Conflict: this session's stream is already open")
        except UnknownEventId as exc:
            return _http_error(400, f"Unknown Last-Event-ID: {exc}")
        return self._sse(session, connection)

    def _delete(self, request: Request) -> Response:
        session = self._session(request)
        if isinstance(session, Response):
            return session
        self.sessions.pop(session.session_id, None)
        session.close()
        logger.info("HTTP session %s deleted", session.session_id)
        return Response(status_code=200)

    @staticmethod
    def _sse(session: HttpSession, connection: SseConnection) -> StreamingResponse:
        async def body() -> AsyncIterator[str]:
            try:
                async for chunk in connection.chunks():
                    yield chunk
            finally:
                session.disconnect(connection)

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(body(), media_type=SSE_TYPE, headers=headers)

    def close_all(self) -> None:
        """End every session and stateless stream (so the server can stop)."""
        sessions, self.sessions = self.sessions, {}
        for session in sessions.values():
            session.close()
        if self.server.modern is not None:
            self.server.modern.shutdown()  # open subscriptions send their final answer and end

        def close_streams() -> None:
            for connection in list(self._stateless_streams):
                connection.close()

        try:
            asyncio.get_running_loop().call_later(0.2, close_streams)  # after those final answers
        except RuntimeError:  # no loop any more
            close_streams()


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket. ``IPPROTO_TCP`` is named on purpose: accepted sockets inherit the
    listener's ``proto``, and asyncio sets ``TCP_NODELAY`` on a connection only when it is
    ``IPPROTO_TCP``. With ``proto`` 0 every answer written in pieces (headers, body, last chunk)
    waits on Nagle for the client's delayed ACK: about 40 ms per request on Linux."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _announce(url: str) -> None:
    sys.stdout.write(f"MCP demo server listening on {url}\n")
    sys.stdout.flush()


async def serve_http(
    server: DemoServer,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    announce: Callable[[str], None] = _announce,
    auth: AuthSettings | None = None,
) -> int:
    """Serve Streamable HTTP on ``host:port`` (0: a free port) until SIGINT/SIGTERM.

    ``announce`` gets the endpoint URL once the server accepts connections (by default one
    line on stdout). With ``auth``, ``/mcp`` is an OAuth protected resource of an authorization
    server on the same origin (:mod:`.auth_http`). Returns the process exit code.
    """
    sock = _bind(host, port)
    bound_port = sock.getsockname()[1]
    url_host = f"[{host.strip('[]')}]" if ":" in host else host
    demo_auth = DemoAuth(f"http://{url_host}:{bound_port}", auth) if auth is not None else None
    app = McpHttpApp(server, bound_host=host, auth=demo_auth)
    config = uvicorn.Config(
        app.asgi, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=3
    )
    uv = uvicorn.Server(config)

    def stop(signum: int, frame: Any) -> None:
        uv.should_exit = True  # before uvicorn installs its own handlers, and after it restores ours

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)

    serving = asyncio.create_task(uv.serve(sockets=[sock]))
    try:
        while not uv.started:
            if serving.done():
                logger.error("the HTTP server failed to start")
                return 1
            await asyncio.sleep(0.01)
        announce(f"http://{url_host}:{bound_port}/mcp")
        while not serving.done() and not uv.should_exit:
            await asyncio.wait({serving}, timeout=0.1)
        app.close_all()  # long-lived SSE responses end, so uvicorn's graceful shutdown can finish
        await serving
        return 0
    finally:
        app.close_all()
        if not serving.done():
            uv.should_exit = True
            await asyncio.wait({serving}, timeout=5)
        await server.shutdown()
        sock.close()
