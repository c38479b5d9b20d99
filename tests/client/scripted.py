"""A scripted in-process server behind the one narrow Transport interface, for client tests of
what real servers won't do on demand. Everything above the transport is the real code."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_tasks_jupyter.client import Client, _client_capabilities
from mcp_tasks_jupyter.dialects import STATEFUL, STATELESS, select_dialect
from mcp_tasks_jupyter.protocol.jsonrpc import ErrorResponse, Notification, Request, Response
from mcp_tasks_jupyter.session.handshake import handshake
from mcp_tasks_jupyter.session.session import Session
from mcp_tasks_jupyter.transport.base import Transport, TransportEvents


class Refuse(Exception):
    def __init__(self, code: int, message: str = "no", data: Any = None) -> None:
        self.code, self.message, self.data = code, message, data


Handler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


class Scripted(Transport):
    """Answers each request with ``await handler(method, params)`` (None: never answers)."""

    kind = "scripted"
    carries_headers = True

    def __init__(self, handler: Handler) -> None:
        self.label = self.server_name = "scripted"
        self.handler = handler
        self.sent: list[tuple[dict[str, Any], dict[str, str] | None]] = []
        self.events: TransportEvents | None = None
        self.stateless = False
        self.version: str | None = None

    async def start(self, events: TransportEvents) -> None:
        self.events = events

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.sent.append((message, headers))
        if "id" in message and "method" in message:
            asyncio.get_running_loop().create_task(self._answer(message))

    async def _answer(self, message: dict[str, Any]) -> None:
        assert self.events is not None
        try:
            result = await self.handler(message["method"], message.get("params") or {})
        except Refuse as exc:
            self.events.message_received(ErrorResponse(message["id"], exc.code, exc.message, exc.data))
            return
        if result is not None:
            self.events.message_received(Response(message["id"], result))

    def notify_client(self, method: str, params: dict[str, Any]) -> None:
        assert self.events is not None
        self.events.message_received(Notification(method, params))

    def ask_client(self, request_id: int | str, method: str, params: dict[str, Any]) -> None:
        """A server request (the stateful wire); the client's answer shows up in ``sent``."""
        assert self.events is not None
        self.events.message_received(Request(request_id, method, params))

    async def close(self) -> None:
        pass

    def set_protocol_version(self, version: str | None, *, stateless: bool = False) -> None:
        self.version, self.stateless = version, stateless

    def requests(self, method: str) -> list[tuple[dict[str, Any], dict[str, str] | None]]:
        return [(m, h) for m, h in self.sent if m.get("method") == method]


async def scripted_client(
    handler: Handler,
    *,
    dialect: str = "auto",
    protocol_version: str | None = None,
    elicitation_handler: Any = None,
    probe_timeout: float = 5.0,
) -> tuple[Client, Scripted]:
    """A Client on the scripted server, connected as ``open_client`` would (handshake, dialect)."""
    transport = Scripted(handler)
    session = Session(transport, capabilities=_client_capabilities(False))
    await session.start()
    stateless = True if dialect in STATELESS else False if dialect in STATEFUL else None
    await handshake(session, protocol_version, stateless=stateless, probe_timeout=probe_timeout)
    return Client(
        session, select_dialect(dialect, session), elicitation_handler=elicitation_handler, sampling_handler=None
    ), transport
