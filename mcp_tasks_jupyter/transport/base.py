"""The one narrow interface every transport implements, and what it reports back."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidMessage, MCPError
from ..protocol.jsonrpc import Message, RequestId, request

if TYPE_CHECKING:
    from .auth import AuthHook


class Jobs(Protocol):
    """A group that owns background work (``session/background.py``'s ``Background``, which the
    connection's session holds): a transport, and sign-in through it, start their jobs in a child group."""

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]: ...

    def child(self, owner: str) -> Jobs: ...

    async def aclose(self) -> None: ...


class TransportEvents(Protocol):
    """What a transport tells its owner (the session). Called from the event loop, never blocking."""

    @property
    def background(self) -> Jobs:
        """The connection's group of background jobs: the transport starts its own in a child of it."""

    def message_received(self, message: Message) -> None: ...

    def request_failed(self, msg_id: RequestId, exc: MCPError) -> None:
        """A transport failure tied to one outstanding request (e.g. its SSE stream was cut for good)."""

    def noise_received(self, exc: InvalidMessage) -> None:
        """Undecodable data that cannot be tied to a request."""

    def connection_lost(self, exc: MCPError) -> None:
        """The connection is gone for good; every outstanding request should fail with ``exc``."""


class Transport(ABC):
    """Moves JSON-RPC messages between this client and one server.

    ``send`` raises an MCPError subclass when the message could not be delivered, or when a failure is
    tied to it (an HTTP error status for a request). Everything the server sends arrives through the
    TransportEvents given to ``start``.
    """

    kind: str = "?"
    #: A short, human name for the server end ("python -m x", "http://host/mcp"); used in errors.
    label: str = "?"
    #: How errors name the server; the session sets it once the server has introduced itself.
    server_name: str = "?"

    @abstractmethod
    async def start(self, events: TransportEvents) -> None: ...

    #: Whether request metadata also travels in headers (HTTP): the session then computes them.
    carries_headers: bool = False
    #: The connection's auth hook (OAuth), if it has one (see ``transport/auth.py``).
    auth: AuthHook | None = None

    @abstractmethod
    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        """Deliver one message; ``headers`` are extra per-message headers (ignored without headers)."""

    def send_request(
        self, msg_id: RequestId, method: str, params: dict[str, Any] | None, headers: dict[str, str] | None = None
    ) -> Awaitable[None]:
        """Deliver one request: ``send`` of ``jsonrpc.request(msg_id, method, params)``; a transport
        that writes bytes itself may encode it from a template instead (``jsonrpc.encode_request``)."""
        return self.send(request(msg_id, method, params), headers)

    @abstractmethod
    async def close(self) -> None: ...

    def set_protocol_version(self, version: str | None, *, stateless: bool = False) -> None:
        """Called once the protocol version is agreed (HTTP sends it as a header).

        ``stateless``: the 2026-07-28 wire (no session, no standalone stream, no resumption).
        ``None`` forgets the version again (a failed modern probe before ``initialize``).
        """

    def reset_session(self) -> None:
        """The server ended the session: forget it before a new ``initialize`` (HTTP only)."""

    def withdraw(self, msg_id: RequestId) -> bool:
        """Stop waiting for a request's answer the transport's own way. True when that already tells
        the server (closing the answer's stream on the stateless HTTP wire), so that no
        ``notifications/cancelled`` is needed."""
        return False

    async def open_listener(self) -> None:
        """Open the channel for server-initiated messages where the transport needs one (HTTP GET)."""

    #: Called (no arguments) when ``push_channel_open`` changes; the session sets it.
    on_channel_change: Callable[[], None] | None = None

    @property
    def push_channel_open(self) -> bool:
        """Whether the server can send this client a message of its own now, outside any request's
        answer (stdio: while the process runs; HTTP: while the GET stream is open)."""
        return True

    def describe(self) -> dict[str, Any]:
        return {"transport": self.kind, "target": self.label}
