"""Transports: stdio (a child process) and Streamable HTTP."""

from .base import Transport, TransportEvents
from .http import StreamableHTTPTransport
from .stdio import StdioTransport

__all__ = ["StdioTransport", "StreamableHTTPTransport", "Transport", "TransportEvents"]
