"""The demo server for the MCP Apps tests (the fixtures of tests/client)."""

from tests.client.conftest import connect_demo, transport

__all__ = ["connect_demo", "transport"]
