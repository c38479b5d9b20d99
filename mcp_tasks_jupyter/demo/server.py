"""The demo server process: its configuration, its shared task store, its tools, and the choice
of dialect for each client.

Three task dialects, chosen per client by what the client sends (``--dialect`` forces one):

``2025-11-25``
    A client that opens with ``initialize`` (protocol version 2025-11-25 or older) and shows no
    sep1686 sign: :class:`~.protocol_2025.Session2025`.
``sep1686``
    A client whose ``initialize`` declares the SEP-1686 draft's ``tasks`` capability (a boolean
    leaf, e.g. ``{"tasks": {"tools": {"call": true}}}``), or one whose session sends a request
    carrying ``params._meta["modelcontextprotocol.io/task"]``: the session turns into a
    :class:`~.protocol_sep1686.Session1686` in place (its earlier tasks keep their dialect).
``ext``
    Any request (other than ``initialize``) whose ``params._meta`` names
    ``io.modelcontextprotocol/protocolVersion``: served statelessly by the one
    :class:`~.protocol_2026.Stateless2026` of the process with the tasks extension
    (:mod:`.protocol_ext`); over HTTP also any POST without ``Mcp-Session-Id`` whose
    ``MCP-Protocol-Version`` header is not a legacy version.

Legacy sessions (one for stdio, one per ``Mcp-Session-Id`` over HTTP) and stateless requests all
share one :class:`~.task_store.TaskStore`, so tasks outlive the connection that created them; each
dialect sees only its own tasks. On stdio a :class:`Connection` routes every line; stateless
requests and a legacy session can share one pipe.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..release import __version__
from .options import DemoConfig
from .protocol_2025 import Session2025
from .protocol_2026 import Stateless2026, is_modern, unsupported_version
from .protocol_ext import TasksExtension
from .protocol_sep1686 import Session1686, initialize_wants_sep1686, task_marker
from .rpc import INVALID_REQUEST, Outbound, is_valid_id, make_error, message_kind
from .task_store import TaskStore
from .tools import Tool, build_tools


class DemoServer:
    """Process-wide state of the demo server.

    ``tools`` (by name, in listing order) are what legacy clients see, ``ext_tools`` what ext
    clients see; both default to the demo's tools (:func:`~.tools.build_tools`). Tests add their
    own through these (tests/support/demo_server.py).
    """

    def __init__(
        self,
        config: DemoConfig | None = None,
        *,
        tools: dict[str, Tool] | None = None,
        ext_tools: dict[str, Tool] | None = None,
    ) -> None:
        self.config = config or DemoConfig()
        self.store = TaskStore()
        self.tools = build_tools() if tools is None else dict(tools)
        self.version = __version__
        self.modern: Stateless2026 | None = None
        if self.config.serves("ext"):
            extension = TasksExtension(self.store, self.config.clamp_ttl(None), self.config.poll_interval_ms)
            self.modern = Stateless2026(
                config=self.config,
                store=self.store,
                tools=build_tools() if ext_tools is None else dict(ext_tools),
                server_version=self.version,
                extension=extension,
            )

    # -- the choice of dialect ---------------------------------------------------------------

    @property
    def serves_legacy(self) -> bool:
        """Whether ``initialize`` opens a session (false only with ``--dialect ext``)."""
        return self.config.dialect != "ext"

    def is_modern(self, message: Any) -> bool:
        """Whether this message is for the stateless 2026-07-28 handler."""
        return self.modern is not None and (self.config.dialect == "ext" or is_modern(message))

    def refuse_initialize(self, message: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``initialize`` with ``--dialect ext``: -32022 naming the versions served."""
        params = message.get("params")
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        return {"jsonrpc": "2.0", "id": message.get("id"), "error": unsupported_version(requested).to_error()}

    def open_session(self, outbound: Outbound, first: dict[str, Any] | None = None) -> Session2025:
        """A new legacy session that sends through ``outbound``, of the dialect the first message
        (usually ``initialize``) asks for."""
        cls: type[Session2025] = Session2025
        if self.config.dialect == "sep1686":
            cls = Session1686
        elif self.config.dialect == "auto" and first is not None:
            params = first.get("params")
            if (first.get("method") == "initialize" and initialize_wants_sep1686(params)) or task_marker(params):
                cls = Session1686
        return cls(
            config=self.config,
            store=self.store,
            tools=self.tools,
            server_version=self.version,
            outbound=outbound,
        )

    def follow(self, session: Session2025, message: Any) -> None:
        """Turn a 2025-11-25 session into a sep1686 one when its client shows a sep1686 sign: a
        request with the sep1686 task key, or a (late) ``initialize`` declaring the draft's
        ``tasks`` capability."""
        if self.config.dialect != "auto" or type(session) is not Session2025:
            return
        if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
            return
        params = message.get("params")
        if task_marker(params) is not None or (
            message["method"] == "initialize" and initialize_wants_sep1686(params)
        ):
            session.become(Session1686)

    async def shutdown(self) -> None:
        """End subscriptions and cancel every running task body."""
        if self.modern is not None:
            self.modern.shutdown()
        await self.store.shutdown()


class Connection:
    """One stdio client: every message goes to the stateless handler or to the one legacy session."""

    def __init__(self, server: DemoServer, outbound: Outbound) -> None:
        self.server = server
        self.outbound = outbound
        self.session: Session2025 | None = None
        self._modern_inflight: dict[Any, asyncio.Task[Any]] = {}
        self._cancelled_by_client: set[Any] = set()

    async def handle(self, message: Any) -> dict[str, Any] | None:
        """Process one incoming message; the response to send back, or None."""
        server = self.server
        kind = message_kind(message)
        if kind == "notification" and message["method"] == "notifications/cancelled":
            params = message.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            runner = self._modern_inflight.get(request_id) if is_valid_id(request_id) else None
            if runner is not None:
                self._cancelled_by_client.add(request_id)
                runner.cancel()
                return None
        if kind == "request" and message["method"] == "initialize" and not server.serves_legacy:
            return server.refuse_initialize(message)
        if kind in ("request", "notification") and server.is_modern(message):
            return await self._modern(message)
        if self.session is None:
            if not server.serves_legacy:
                return make_error(None, INVALID_REQUEST, "Invalid Request") if kind == "invalid" else None
            self.session = server.open_session(self.outbound, message if isinstance(message, dict) else None)
        server.follow(self.session, message)
        return await self.session.handle(message)

    async def _modern(self, message: dict[str, Any]) -> dict[str, Any] | None:
        assert self.server.modern is not None
        if "id" not in message:
            return None
        msg_id = message["id"]
        current = asyncio.current_task()
        if current is not None:
            self._modern_inflight[msg_id] = current
        try:
            return await self.server.modern.handle(message, self.outbound)
        except asyncio.CancelledError:
            if msg_id in self._cancelled_by_client and current is not None and current.cancelling() == 1:
                current.uncancel()
                return None  # the client cancelled: no response
            raise
        finally:
            if self._modern_inflight.get(msg_id) is current:
                del self._modern_inflight[msg_id]
            self._cancelled_by_client.discard(msg_id)

    def close(self) -> None:
        """The client went away: its legacy session ends (tasks live on)."""
        if self.session is not None:
            self.session.close()


__all__ = ["Connection", "DemoServer"]
