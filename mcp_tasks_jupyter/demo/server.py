"""The demo server process: its configuration, its shared task store and its tools.

Transports ask :meth:`DemoServer.open_session` for a protocol session per client connection
(one for stdio, one per ``Mcp-Session-Id`` for HTTP). Every session shares the same
:class:`~.task_store.TaskStore`, so tasks outlive the connection that created them.
"""

from __future__ import annotations

from importlib import metadata

from .config import DemoConfig
from .jsonrpc import Outbound
from .protocol_2025 import Session2025
from .task_store import TaskStore
from .tools import build_tools


def _package_version() -> str:
    try:
        return metadata.version("mcp-tasks-jupyter")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.0.0"


class DemoServer:
    """Process-wide state of the demo server."""

    def __init__(self, config: DemoConfig | None = None) -> None:
        self.config = config or DemoConfig()
        self.store = TaskStore()
        self.tools = build_tools(faults=self.config.faults)
        self.version = _package_version()

    def open_session(self, outbound: Outbound) -> Session2025:
        """A new protocol session that sends through ``outbound``."""
        return Session2025(
            config=self.config,
            store=self.store,
            tools=self.tools,
            server_version=self.version,
            outbound=outbound,
        )

    async def shutdown(self) -> None:
        """Cancel every running task body."""
        await self.store.shutdown()
