"""A scripted misbehaving MCP task server, for the faults a real server will not produce on demand.

One small 2025-11-25 task server (``Brain``: tools, tasks, sessions) behind two real transports:
Streamable HTTP on a loopback socket (``FaultHTTPServer``, in the test's own event loop, so a test can
stop it, restart it on the same port, forget its sessions or its tasks), and stdio in a child process
(``tests/faults/stdio_server.py``). A scenario scripts it: ``brain.script[method] = fn`` answers that
method instead (``fn(message)`` returns a result dict, an ``Error``, a ``Raw`` HTTP answer, ``SILENT`` or
``None`` for the normal answer); ``brain.push(message)`` sends a server message (a question, a
notification) on the GET stream or stdout.

Tools: ``job`` (a task; ``seconds`` until it completes, or it waits for ``brain.finish``), ``ask`` (a
task that asks an elicitation question when it starts) and ``echo`` (no task).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

PROTOCOL = "2025-11-25"
RELATED = "io.modelcontextprotocol/related-task"
TOOLS = [
    {
        "name": "job",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        "execution": {"taskSupport": "optional"},
    },
    {"name": "ask", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
    {"name": "echo", "inputSchema": {"type": "object"}},
]


@dataclass
class Raw:
    """An HTTP answer exactly as given (over stdio: ``body`` written as one line)."""

    status: int = 200
    body: bytes | str = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Error:
    """A JSON-RPC error answer."""

    code: int
    message: str
    data: Any = None


#: The ``Mcp-Session-Id`` of the HTTP request a brain is answering now (None: none, or stdio).
REQUEST_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar("REQUEST_SESSION", default=None)

#: A request left unanswered for good.
SILENT = object()
#: Put in the outbox by ``FaultHTTPServer.drop_streams``: the GET stream ends there.
END_STREAM: dict[str, Any] = {"end": "stream"}


@dataclass
class Task:
    task_id: str
    tool: str
    status: str = "working"
    status_message: str | None = None
    result: dict[str, Any] | None = None
    created_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def wire(self, poll_interval_ms: int, ttl_ms: int | None) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.created_at,
            "ttl": ttl_ms,
            "pollInterval": poll_interval_ms,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task


def result_message(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_message(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


@dataclass
class Burst:
    """Server messages pushed on the GET stream in one write (``Brain.push(Burst([...]))``)."""

    messages: list[dict[str, Any]]


class Brain:
    """The server's state and its answers, whatever the transport."""

    def __init__(self, *, name: str = "fault-server", poll_interval_ms: int = 100) -> None:
        self.name = name
        self.poll_interval_ms = poll_interval_ms
        self.ttl_ms: int | None = 60_000
        self.tasks: dict[str, Task] = {}
        self.script: dict[str, Callable[[dict[str, Any]], Any]] = {}
        #: Every message received, in order.
        self.received: list[dict[str, Any]] = []
        #: The client's answers to server requests, by request id.
        self.answers: dict[Any, dict[str, Any]] = {}
        #: The ids of the questions asked (``ask``), in order.
        self.asked: list[Any] = []
        self.outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._ids = itertools.count(1)
        self._server_ids = itertools.count(1000)

    # -- what a scenario calls -----------------------------------------------------------------

    def push(self, message: dict[str, Any] | Burst | str | bytes) -> None:
        """Send a server message (request or notification) to the client; over HTTP, text or bytes go
        on the GET stream exactly as given."""
        self.outbox.put_nowait(message)

    def ask(self, task_id: str | None, message: str = "Which one?", *, request_id: Any = None) -> Any:
        """Send an elicitation request tagged with ``task_id`` (None: untagged); its id."""
        request_id = next(self._server_ids) if request_id is None else request_id
        params: dict[str, Any] = {
            "message": message,
            "requestedSchema": {"type": "object", "properties": {"choice": {"type": "string"}}},
        }
        if task_id is not None:
            params["_meta"] = {RELATED: {"taskId": task_id}}
        self.push({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params})
        self.asked.append(request_id)
        return request_id

    def finish(self, task_id: str, text: str = "done", *, status: str = "completed") -> None:
        task = self.tasks[task_id]
        task.status = status
        task.result = {"content": [{"type": "text", "text": text}], "isError": status == "failed"}
        task.done.set()

    def forget_tasks(self) -> None:
        self.tasks.clear()

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method]

    # -- answering -----------------------------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> dict[str, Any] | Raw | object | None:
        """The answer to one client message (None for notifications and responses)."""
        self.received.append(message)
        if "method" not in message:
            if "id" in message:
                self.answers[message["id"]] = message
            return None
        method, msg_id = message["method"], message.get("id")
        scripted = self.script.get(method)
        if scripted is not None:
            answer = scripted(message)
            if asyncio.iscoroutine(answer):
                answer = await answer
            if isinstance(answer, Error):
                return error_message(msg_id, answer.code, answer.message, answer.data)
            if isinstance(answer, dict) and "jsonrpc" not in answer:
                return result_message(msg_id, answer)
            if answer is not None:
                return answer  # a Raw answer, SILENT, or a whole message as given
        if msg_id is None:
            return None
        try:
            return result_message(msg_id, await self._answer(method, message.get("params") or {}))
        except LookupError as exc:
            return error_message(msg_id, -32602, str(exc.args[0]))
        except NotImplementedError:
            return error_message(msg_id, -32601, f"Method not found: {method}")

    async def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return {
                "protocolVersion": PROTOCOL,
                "serverInfo": {"name": self.name, "version": "1"},
                "capabilities": {
                    "tools": {},
                    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
                },
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            return self._call(params)
        if method == "tasks/get":
            return self._task(params).wire(self.poll_interval_ms, self.ttl_ms)
        if method == "tasks/result":
            task = self._task(params)
            await task.done.wait()
            return {**(task.result or {}), "_meta": {RELATED: {"taskId": task.task_id}}}
        if method == "tasks/cancel":
            task = self._task(params)
            if task.status in ("completed", "failed", "cancelled"):
                raise LookupError(f"task {task.task_id} is already {task.status}")
            task.status = "cancelled"
            task.done.set()
            return task.wire(self.poll_interval_ms, self.ttl_ms)
        if method == "tasks/list":
            return {"tasks": [t.wire(self.poll_interval_ms, self.ttl_ms) for t in self.tasks.values()]}
        raise NotImplementedError

    def _task(self, params: dict[str, Any]) -> Task:
        task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
        if task is None:
            raise LookupError(f"Failed to retrieve task: Task not found: {params.get('taskId')}")
        return task

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name == "echo" or "task" not in params:
            return {"content": [{"type": "text", "text": json.dumps(arguments)}]}
        task = Task(f"task-{next(self._ids)}", name)  # type: ignore[arg-type]
        self.tasks[task.task_id] = task
        if name == "job" and isinstance(arguments.get("seconds"), (int, float)):
            asyncio.get_running_loop().call_later(arguments["seconds"], self._finish_if_running, task.task_id)
        if name == "ask":
            task.status = "input_required"
            self.ask(task.task_id)
        return {"task": task.wire(self.poll_interval_ms, self.ttl_ms)}

    def _finish_if_running(self, task_id: str) -> None:
        task = self.tasks.get(task_id)
        if task is not None and task.status in ("working", "input_required"):
            self.finish(task_id)


# -- Streamable HTTP on loopback -----------------------------------------------------------------


class FaultHTTPServer:
    """``brain`` over Streamable HTTP at ``url``; sessions are checked (404 for an unknown one)."""

    def __init__(self, brain: Brain | None = None) -> None:
        self.brain = brain or Brain()
        self.sessions: set[str] = set()
        #: (HTTP method, headers) of every HTTP request, in order.
        self.http: list[tuple[str, dict[str, str]]] = []
        self._session_ids = itertools.count(1)
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server: Any = None
        self._serving: asyncio.Task[None] | None = None
        #: Once true, a GET for the event stream is answered 405 (the server offers none).
        self.refuse_streams = False
        #: Answer a request without a session, or naming one it does not know, with a JSON-RPC error in
        #: the body (as the SDKs' servers and the demo do) instead of plain text.
        self.json_session_errors = False

    def drop_streams(self) -> None:
        """End the open GET stream and refuse new ones: the client's push channel is gone."""
        self.refuse_streams = True
        self.brain.push(END_STREAM)

    def forget_sessions(self) -> None:
        """The server ends every session: requests naming one get HTTP 404 from now on."""
        self.sessions.clear()

    async def start(self) -> None:
        import uvicorn

        if self._sock is None:
            self._sock = socket.socket()
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._sock.bind(("127.0.0.1", self.port))
        self._server = uvicorn.Server(uvicorn.Config(self._app(), log_level="error", lifespan="off"))
        self._serving = asyncio.create_task(self._server.serve(sockets=[self._sock]))
        while not self._server.started:
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Go away: connections are refused until ``start`` again (sessions forgotten, as a restart does)."""
        if self._server is None:
            return
        self._server.should_exit = True
        self._server.force_exit = True
        assert self._serving is not None
        await asyncio.wait_for(self._serving, 5)
        self._sock.close()
        self._sock = None  # type: ignore[assignment]
        self._server = None
        self.sessions.clear()

    async def restart(self, *, after: float = 0.0, keep_tasks: bool = True) -> None:
        await self.stop()
        if not keep_tasks:
            self.brain.forget_tasks()
        await asyncio.sleep(after)
        await self.start()

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        brain = self.brain

        async def endpoint(request: Request) -> Response:
            self.http.append((request.method, dict(request.headers)))
            session = request.headers.get("mcp-session-id")
            if request.method == "DELETE":
                self.sessions.discard(session or "")
                return Response(status_code=200)
            if request.method == "GET":
                if session not in self.sessions:
                    return Response(status_code=404 if session else 400)
                if self.refuse_streams:
                    return Response(status_code=405)
                return StreamingResponse(self._stream(), media_type="text/event-stream")
            try:
                message = json.loads(await request.body())
            except ValueError:
                return JSONResponse(error_message(None, -32700, "Parse error"), status_code=400)
            is_init = message.get("method") == "initialize"
            if not is_init and session not in self.sessions:
                status = 404 if session else 400
                if self.json_session_errors:
                    said = "Session not found" if session else "Bad Request: missing Mcp-Session-Id header"
                    return JSONResponse(error_message(None, -32600, said), status_code=status)
                return Response(b"session not found", status_code=status)
            REQUEST_SESSION.set(session)
            answer = await brain.handle(message)
            if answer is SILENT:
                await asyncio.Event().wait()
            if isinstance(answer, Raw):
                return Response(
                    answer.body, status_code=answer.status, media_type=answer.content_type, headers=answer.headers
                )
            if answer is None:
                return Response(status_code=202)
            headers = {}
            if is_init and "error" not in answer:
                sid = f"session-{next(self._session_ids)}"
                self.sessions.add(sid)
                headers["Mcp-Session-Id"] = sid
            return JSONResponse(answer, headers=headers)

        return Starlette(routes=[Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])])

    async def _stream(self) -> AsyncIterator[str | bytes]:
        yield ": open\n\n"
        while True:
            message = await self.brain.outbox.get()
            if message is END_STREAM:
                return
            if isinstance(message, (str, bytes)):  # an event exactly as given (noise, framing)
                yield message
                continue
            if isinstance(message, Burst):
                yield "".join(f"data: {json.dumps(m)}\n\n" for m in message.messages)  # one write
                continue
            yield f"data: {json.dumps(message)}\n\n"


@contextlib.asynccontextmanager
async def http_fault_server(brain: Brain | None = None) -> AsyncIterator[FaultHTTPServer]:
    """A started FaultHTTPServer, stopped at the end."""
    server = FaultHTTPServer(brain)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def closed_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
