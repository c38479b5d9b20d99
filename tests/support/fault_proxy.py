"""A fault-injecting proxy for Streamable HTTP, of the project's own: it sits between a client and an MCP
server on 127.0.0.1 and, at random but reproducibly (one seed), breaks what passes through it.

Faults, by kind (``FaultProxy.injected`` counts each):

``reset``
    the client's connection is aborted before the request reaches the server (nothing arrives there);
``reset_after``
    the request reaches the server, its answer is dropped and the connection aborted (the server
    acted: only for requests that may be repeated, ``tasks/get`` and the event stream);
``502`` / ``503``
    answered by the proxy itself, the request never forwarded;
``delay``
    held past the client's request timeout, then forwarded (its late answer reaches nobody);
``cut_stream``
    an event stream (the GET stream, an SSE answer) cut after a short while;
``404``
    a request naming a session is answered 404, as a server that forgot its sessions does (the server
    still has it: the client starts a new session and goes on);
``dark``
    only with ``dark_every_s``: now and then the network goes dark for a few seconds (``dark_for_s``):
    every request that arrives meanwhile, whatever its method, is held until the light comes back and
    then its connection is cut (nothing reached the server); open streams are cut when it goes dark.

``initialize``, ``tools/list`` and ``tools/call`` pass untouched: a tool call the proxy broke would be a
task the server made and the client never heard of, which no client can know (the soak measures what a
client can keep). Everything after that is fair game: polls, results, cancels, the answers to the server's
questions, notifications, the event streams. ``restart_upstream`` lets the soak restart the server.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

#: Methods never broken (see the module docstring).
UNTOUCHED = frozenset({"initialize", "tools/list", "tools/call", "notifications/initialized"})
#: Methods an answer may be dropped after the server acted on them (repeating them changes nothing).
REPEATABLE = frozenset({"tasks/get", "GET"})
HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host"})


@dataclass
class FaultRates:
    """The chance of each fault for one request it applies to (the rest pass untouched)."""

    reset: float = 0.02
    reset_after: float = 0.02
    bad_gateway: float = 0.02
    unavailable: float = 0.02
    delay: float = 0.01
    cut_stream: float = 0.3
    lost_session: float = 0.005
    #: Seconds between dark spells (drawn from this range; None: never dark) and how long each lasts.
    dark_every_s: tuple[float, float] | None = None
    dark_for_s: tuple[float, float] = (1.0, 8.0)


@dataclass
class FaultProxy:
    """The proxy: ``await start()`` gives its URL; ``upstream`` is the server's ``/mcp`` URL."""

    upstream: str
    seed: int
    rates: FaultRates = field(default_factory=FaultRates)
    #: How long a ``delay`` holds a request: a little longer than the client's request timeout.
    delay_s: float = 3.0
    #: Counts of the faults injected, by kind.
    injected: collections.Counter[str] = field(default_factory=collections.Counter)
    #: Requests forwarded, by JSON-RPC method (``GET`` for the event stream, ``answer`` for a response).
    forwarded: collections.Counter[str] = field(default_factory=collections.Counter)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._runner: web.AppRunner | None = None
        self._client: aiohttp.ClientSession | None = None
        self.url = ""
        self._light = asyncio.Event()
        self._light.set()
        self._dimmer: asyncio.Task[None] | None = None
        self._streams: dict[int, web.Request] = {}  # by id(): a request is not hashable

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/mcp", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # aiohttp names no public port
        self._client = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=5))
        self.url = f"http://127.0.0.1:{port}/mcp"
        if self.rates.dark_every_s is not None:
            self._dimmer = asyncio.create_task(self._dark_spells(self.rates.dark_every_s, self.rates.dark_for_s))
        return self.url

    async def _dark_spells(self, every: tuple[float, float], lasting: tuple[float, float]) -> None:
        spells = random.Random(self.seed + 1)  # its own stream: the faults per request stay as they were
        while True:
            await asyncio.sleep(spells.uniform(*every))
            self.go_dark()
            await asyncio.sleep(spells.uniform(*lasting))
            self.light_up()

    def go_dark(self) -> None:
        """The network goes dark now, until :meth:`light_up`: requests are held (then cut), streams cut."""
        self.injected["dark"] += 1
        self._light.clear()
        for request in list(self._streams.values()):
            _abort(request)

    def light_up(self) -> None:
        """The light comes back: the requests held meanwhile are cut, and new ones pass."""
        self._light.set()

    async def stop(self) -> None:
        if self._dimmer is not None:
            self._dimmer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._dimmer
        self._light.set()
        if self._client is not None:
            await self._client.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- one request ---------------------------------------------------------------------------

    def _chance(self, rate: float) -> bool:
        return self._random.random() < rate

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if not self._light.is_set():  # dark: held, then cut (counted once per spell, not per request)
            await self._light.wait()
            return _abort(request)
        what = _what(request.method, body)
        if what in UNTOUCHED or request.method == "DELETE":
            return await self._forward(request, body, what, cut=False)
        rates = self.rates
        if "mcp-session-id" in request.headers and self._chance(rates.lost_session):
            return self._inject("404", web.Response(status=404, text="session not found"))
        if self._chance(rates.reset):
            self.injected["reset"] += 1
            return _abort(request)
        if self._chance(rates.bad_gateway):
            return self._inject("502", web.Response(status=502, text="bad gateway"))
        if self._chance(rates.unavailable):
            return self._inject("503", web.Response(status=503, text="unavailable", headers={"Retry-After": "1"}))
        if what != "GET" and self._chance(rates.delay):
            self.injected["delay"] += 1
            await asyncio.sleep(self.delay_s)
        if what in REPEATABLE and self._chance(rates.reset_after):
            self.injected["reset_after"] += 1
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with self._send(request, body) as answer:
                    await answer.read() if what != "GET" else None
            return _abort(request)
        return await self._forward(request, body, what, cut=self._chance(rates.cut_stream))

    def _inject(self, kind: str, response: web.Response) -> web.Response:
        self.injected[kind] += 1
        return response

    def _send(self, request: web.Request, body: bytes) -> Any:
        assert self._client is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        return self._client.request(request.method, self.upstream, data=body or None, headers=headers)

    async def _forward(self, request: web.Request, body: bytes, what: str, *, cut: bool) -> web.StreamResponse:
        self.forwarded[what] += 1
        try:
            async with self._send(request, body) as answer:
                headers = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_HEADERS}
                if not answer.content_type.startswith("text/event-stream"):
                    return web.Response(status=answer.status, body=await answer.read(), headers=headers)
                stream = web.StreamResponse(status=answer.status, headers=headers)
                await stream.prepare(request)
                self._streams[id(request)] = request
                cut_after = self._random.uniform(0.2, 3.0) if cut else None
                loop = asyncio.get_running_loop()
                began = loop.time()
                try:
                    async for chunk in answer.content.iter_any():
                        await stream.write(chunk)
                        if cut_after is not None and loop.time() - began > cut_after:
                            self.injected["cut_stream"] += 1
                            return _abort(request)
                finally:
                    self._streams.pop(id(request), None)
                return stream
        except (aiohttp.ClientError, TimeoutError):
            # the server is away (a restart): as a gateway says so
            return web.Response(status=502, text="upstream unreachable")
        except ConnectionResetError:  # the client went away meanwhile
            return _abort(request)


def _what(method: str, body: bytes) -> str:
    """The JSON-RPC method of a POST (``answer`` for a response), or the HTTP method."""
    if method != "POST":
        return method
    try:
        message = json.loads(body)
    except ValueError:
        return "POST"
    if isinstance(message, dict):
        found = message.get("method")
        return found if isinstance(found, str) else "answer"
    return "POST"


def _abort(request: web.Request) -> web.StreamResponse:
    """Cut the client's connection (as a reset does) and give aiohttp something to finish with."""
    transport = request.transport
    if transport is not None:
        transport.abort()
    return web.Response(status=500)


@contextlib.asynccontextmanager
async def fault_proxy(upstream: str, seed: int, **options: Any) -> AsyncIterator[FaultProxy]:
    """A started proxy in front of ``upstream``, stopped at the end."""
    proxy = FaultProxy(upstream, seed, **options)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()
