"""Raw JSON-RPC drivers for the demo server, run as a real subprocess.

:class:`StdioPeer` talks over the child's real stdin/stdout pipes; :class:`HttpPeer` talks to
``--http`` over a real loopback socket with httpx, parsing SSE by hand. Neither uses the
project's client library. Every wait has a timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.demo_server import demo_argv

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 10.0
RELATED = "io.modelcontextprotocol/related-task"
ACCEPT_BOTH = "application/json, text/event-stream"


def server_command(*args: str) -> list[str]:
    """The demo server's command line (with --faults or --conformance, tests/support/demo_server.py)."""
    return demo_argv(*args)


async def eventually(check: Callable[[], Any], timeout: float = TIMEOUT, interval: float = 0.02) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(interval)


class RpcFailure(AssertionError):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"JSON-RPC error {error}")
        self.error = error


# -- stdio -----------------------------------------------------------------------------------


class StdioPeer:
    """A client on the server's stdin/stdout."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ids = itertools.count(1)
        self.received: list[dict[str, Any]] = []  # everything from stdout, in order
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.orphan_responses: list[dict[str, Any]] = []  # id null or unknown id
        self.stdout_garbage: list[bytes] = []
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.create_task(self._read())
        self.stderr = b""
        self._stderr_reader = asyncio.create_task(self._read_stderr())

    @classmethod
    @asynccontextmanager
    async def start(cls, *args: str) -> AsyncIterator[StdioPeer]:
        proc = await asyncio.create_subprocess_exec(
            *server_command(*args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
            limit=16 * 1024 * 1024,
        )
        peer = cls(proc)
        try:
            yield peer
        finally:
            await peer.close()
        assert not peer.stdout_garbage, f"non-JSON on stdout: {peer.stdout_garbage!r}"

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                self.stdout_garbage.append(line)
                continue
            self.received.append(message)
            if "method" in message and "id" in message:
                self.server_requests.put_nowait(message)
            elif "method" in message:
                self.notifications.append(message)
            else:
                future = self._waiting.pop(message.get("id"), None)
                if future is None or future.done():
                    self.orphan_responses.append(message)
                else:
                    future.set_result(message)

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self.stderr += chunk

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def start_request(
        self, method: str, params: dict[str, Any] | None = None
    ) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Send a request; its id and the future of its response."""
        msg_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return msg_id, future

    async def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """The whole response message."""
        _, future = await self.start_request(method, params)
        return await asyncio.wait_for(future, timeout)

    async def result(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        response = await self.request(method, params, timeout)
        if "error" in response:
            raise RpcFailure(response["error"])
        return response["result"]

    async def error(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        response = await self.request(method, params, timeout)
        assert "error" in response, f"expected an error, got {response}"
        return response["error"]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def respond(
        self, msg_id: Any, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
    ) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        await self.send(message)

    async def initialize(
        self, capabilities: dict[str, Any] | None = None, version: str = "2025-11-25"
    ) -> dict[str, Any]:
        result = await self.result(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "demo-tests", "version": "0"},
            },
        )
        await self.notify("notifications/initialized")
        return result

    async def next_server_request(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        return await asyncio.wait_for(self.server_requests.get(), timeout)

    def notes(self, method: str, task_id: str | None = None) -> list[dict[str, Any]]:
        """Notification params of one method (for one task)."""
        found = []
        for note in self.notifications:
            if note["method"] != method:
                continue
            params = note.get("params", {})
            owner = params.get("taskId") or params.get("_meta", {}).get(RELATED, {}).get("taskId")
            if task_id is None or owner == task_id:
                found.append(params)
        return found

    async def wait_status(self, task_id: str, status: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Wait for a ``notifications/tasks/status`` with this status."""

        def check() -> dict[str, Any] | None:
            return next(
                (p for p in self.notes("notifications/tasks/status", task_id) if p["status"] == status), None
            )

        return await eventually(check, timeout)

    async def call_task(
        self, name: str, arguments: dict[str, Any], ttl: int | None = None, progress_token: Any = None
    ) -> dict[str, Any]:
        """tools/call as a task; the Task from the CreateTaskResult."""
        params: dict[str, Any] = {
            "name": name,
            "arguments": arguments,
            "task": {} if ttl is None else {"ttl": ttl},
        }
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        result = await self.result("tools/call", params)
        return result["task"]

    async def close(self, timeout: float = 10.0) -> int:
        """Close stdin and wait for the process to end (killing it if it does not)."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            code = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            raise AssertionError("the server did not exit after stdin closed") from None
        finally:
            await asyncio.wait({self._reader, self._stderr_reader}, timeout=5)
        return code


# -- HTTP ------------------------------------------------------------------------------------


@dataclass
class SseEvent:
    id: str | None
    data: str | None
    retry: int | None

    @property
    def message(self) -> dict[str, Any] | None:
        return json.loads(self.data) if self.data else None


class SseReader:
    """Events of one streaming httpx response."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()
        self.events: list[SseEvent] = []
        self.request_id: Any = None  # the id of the request this stream answers, when known

    async def _next(self) -> SseEvent | None:
        fields: dict[str, list[str]] = {}
        async for line in self._lines:
            if not line:
                if fields:
                    data = "\n".join(fields["data"]) if "data" in fields else None
                    retry = fields.get("retry")
                    event_id = fields["id"][-1] if "id" in fields else None
                    return SseEvent(event_id, data, int(retry[-1]) if retry else None)
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
        return None

    async def next(self, timeout: float = TIMEOUT) -> SseEvent | None:
        """The next event, or None when the stream ended."""
        event = await asyncio.wait_for(self._next(), timeout)
        if event is not None:
            self.events.append(event)
        return event

    async def next_message(self, timeout: float = TIMEOUT) -> tuple[SseEvent, dict[str, Any]] | None:
        """The next event that carries a message (skipping priming and retry-only events)."""
        deadline = time.monotonic() + timeout
        while True:
            event = await self.next(max(0.01, deadline - time.monotonic()))
            if event is None:
                return None
            if event.data:
                return event, json.loads(event.data)

    async def until(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> list[tuple[SseEvent, dict[str, Any]]]:
        """Messages up to and including the first that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            item = await self.next_message(max(0.01, deadline - time.monotonic()))
            if item is None:
                raise AssertionError(f"stream ended before the expected message; got {[m for _, m in seen]}")
            seen.append(item)
            if predicate(item[1]):
                return seen

    async def rest(self, timeout: float = TIMEOUT) -> list[SseEvent]:
        """All remaining events until the stream ends."""
        deadline = time.monotonic() + timeout
        events = []
        while (event := await self.next(max(0.01, deadline - time.monotonic()))) is not None:
            events.append(event)
        return events


@dataclass
class HttpServer:
    proc: asyncio.subprocess.Process
    url: str


@asynccontextmanager
async def http_server(*args: str) -> AsyncIterator[HttpServer]:
    """The demo server on ``--http --port 0``; terminated (SIGTERM) at the end."""
    proc = await asyncio.create_subprocess_exec(
        *server_command("--http", "--port", "0", *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        prefix = "MCP demo server listening on http://127.0.0.1:"
        assert line.startswith(prefix) and line.endswith("/mcp\n"), line
        yield HttpServer(proc, line.rsplit(" ", 1)[1].strip())
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                raise AssertionError("the HTTP server did not stop on SIGTERM") from None


class HttpPeer:
    """A raw Streamable HTTP client for one session."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.session_id: str | None = None
        self.ids = itertools.count(1)

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
            headers["MCP-Protocol-Version"] = "2025-11-25"
        headers.update(extra)
        return headers

    def message(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        if params is not None:
            message["params"] = params
        return message

    async def post(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
        return await self.client.post(self.url, json=message, headers=headers or self.headers(), timeout=TIMEOUT)

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.post(
            self.message(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "demo-tests", "version": "0"},
                },
            )
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        note = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202
        return response.json()["result"]

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.post(self.message(method, params))
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/json")
        return response.json()

    async def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.request(method, params)
        if "error" in response:
            raise RpcFailure(response["error"])
        return response["result"]

    async def respond(
        self, msg_id: Any, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
    ) -> httpx.Response:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        return await self.post(message)

    async def call_task(self, name: str, arguments: dict[str, Any], **task: Any) -> dict[str, Any]:
        return (await self.result("tools/call", {"name": name, "arguments": arguments, "task": task}))["task"]

    @asynccontextmanager
    async def stream_post(self, message: dict[str, Any]) -> AsyncIterator[SseReader]:
        """POST a request whose answer is an SSE stream (tasks/result)."""
        async with self.client.stream(
            "POST", self.url, json=message, headers=self.headers(), timeout=TIMEOUT
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            yield SseReader(response)

    @asynccontextmanager
    async def stream_get(self, last_event_id: str | None = None, expect: int = 200) -> AsyncIterator[SseReader]:
        """The standalone GET stream (or a resumed stream with Last-Event-ID)."""
        headers = {"Accept": "text/event-stream"}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        async with self.client.stream("GET", self.url, headers=headers, timeout=TIMEOUT) as response:
            assert response.status_code == expect, (response.status_code, await response.aread())
            if expect == 200:
                assert response.headers["content-type"].startswith("text/event-stream")
            yield SseReader(response)


# -- the stateless 2026-07-28 wire (ext dialect) ---------------------------------------------

MODERN = "2026-07-28"
TASKS_EXT = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
NAME_FIELDS = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


def modern_meta(
    *, tasks: bool = True, elicitation: bool = True, version: str = MODERN, **extra: Any
) -> dict[str, Any]:
    """The per-request ``_meta`` of a 2026-07-28 request (``tasks``: opt into the extension)."""
    capabilities: dict[str, Any] = {}
    if elicitation:
        capabilities["elicitation"] = {}
    if tasks:
        capabilities["extensions"] = {TASKS_EXT: {}}
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "demo-tests", "version": "0"},
        **extra,
    }


def modern(params: dict[str, Any] | None = None, **meta_options: Any) -> dict[str, Any]:
    """Request params with a 2026-07-28 ``_meta`` (see :func:`modern_meta`)."""
    return {**(params or {}), "_meta": modern_meta(**meta_options)}


async def poll_task(
    get: Callable[[dict[str, Any]], Any], task_id: str, until: tuple[str, ...] = TERMINAL, timeout: float = TIMEOUT
) -> dict[str, Any]:
    """Poll ext ``tasks/get`` (``get(params)`` returns its result) until the status is one of ``until``."""
    deadline = time.monotonic() + timeout
    while True:
        task = await get(modern({"taskId": task_id}))
        if task["status"] in until:
            return task
        if time.monotonic() > deadline:
            raise AssertionError(f"task {task_id} still {task['status']} after {timeout}s")
        await asyncio.sleep(0.05)


class StatelessHttp:
    """A raw 2026-07-28 client over HTTP: every POST stands alone, with the standard headers."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.ids = itertools.count(1)

    @staticmethod
    def headers(method: str, params: dict[str, Any], **extra: str) -> dict[str, str]:
        headers = {
            "Accept": ACCEPT_BOTH,
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method,
        }
        field = NAME_FIELDS.get(method)
        if field is not None and isinstance(params.get(field), str):
            headers["Mcp-Name"] = params[field]
        headers.update(extra)
        return headers

    def message(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}

    async def post(self, method: str, params: dict[str, Any], **headers: str) -> httpx.Response:
        headers = self.headers(method, params, **headers)
        return await self.client.post(
            self.url, json=self.message(method, params), headers=headers, timeout=TIMEOUT
        )

    async def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result of a request with the default (opted-in) ``_meta`` unless ``params`` has one."""
        params = params if params is not None and "_meta" in params else modern(params)
        response = await self.post(method, params)
        assert response.status_code == 200, (response.status_code, response.text)
        assert response.headers["content-type"].startswith("application/json")
        assert "mcp-session-id" not in response.headers  # stateless: no session is ever made
        body = response.json()
        if "error" in body:
            raise RpcFailure(body["error"])
        return body["result"]

    async def error(self, method: str, params: dict[str, Any], status: int, **headers: str) -> dict[str, Any]:
        """The JSON-RPC error of a request that must fail with this HTTP status."""
        response = await self.post(method, params, **headers)
        assert response.status_code == status, (response.status_code, response.text)
        return response.json()["error"]

    @asynccontextmanager
    async def stream(self, method: str, params: dict[str, Any]) -> AsyncIterator[SseReader]:
        """A request answered with SSE (subscriptions/listen, or one that asked for progress)."""
        message = self.message(method, params)
        async with self.client.stream(
            "POST", self.url, json=message, headers=self.headers(method, params), timeout=TIMEOUT
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            reader = SseReader(response)
            reader.request_id = message["id"]
            yield reader
