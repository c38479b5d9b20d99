"""JSON-RPC 2.0 building blocks shared by every dialect and transport of the demo server.

Error codes, message constructors, message classification, the :class:`Outbound` interface a
transport offers to a protocol session, and :class:`OutgoingRequests`, the bookkeeping for
requests the server sends to the client (integer ids counting from 0).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, Protocol

# Re-exported: the demo's modules take every code from here.
from ..protocol.jsonrpc import (
    INTERNAL_ERROR as INTERNAL_ERROR,
    INVALID_PARAMS as INVALID_PARAMS,
    INVALID_REQUEST as INVALID_REQUEST,
    METHOD_NOT_FOUND as METHOD_NOT_FOUND,
    PARSE_ERROR as PARSE_ERROR,
    REQUEST_CANCELLED as REQUEST_CANCELLED,
)

# Codes the 2026-07-28 protocol defines (its reserved sub-range -32020..-32099).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

MessageKind = Literal["request", "notification", "response", "invalid"]


class RpcError(Exception):
    """A failure to report as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_error(cls, error: dict[str, Any]) -> RpcError:
        """Rebuild from a JSON-RPC ``error`` member."""
        return cls(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))


class ClientError(Exception):
    """The client answered a server-to-client request with an error (or can no longer answer)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class SessionClosed(ClientError):
    """The session ended before the client answered."""


def make_response(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    """A success response."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def make_error(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """An error response (``msg_id`` None when the request id is unknown)."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": RpcError(code, message, data).to_error()}


def make_notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notification."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def is_valid_id(value: Any) -> bool:
    """JSON-RPC ids this server accepts: strings and integers (not booleans, not null)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def message_kind(message: Any) -> MessageKind:
    """Classify a decoded JSON value as request, notification, response, or invalid."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "invalid"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "invalid"
        if "id" not in message:
            return "notification"
        return "request" if is_valid_id(message["id"]) else "invalid"
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    return "invalid"


class Outbound(Protocol):
    """What a transport offers a protocol session: a way to send one message to the client.

    ``task_id`` names the task a message relates to, so a transport with several streams (HTTP)
    can pick the right one. Sending never blocks; a transport that cannot deliver a server
    request yet keeps it until it can, and delivers every message at most once per stream.
    """

    def send(self, message: dict[str, Any], *, task_id: str | None = None) -> None: ...


class OutgoingRequests:
    """Requests from server to client awaiting their answers; ids are integers from 0."""

    def __init__(self) -> None:
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._closed_reason: str | None = None

    def new(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]:
        """A request message with a fresh id, and the future its answer will resolve."""
        if self._closed_reason is not None:
            raise SessionClosed(INTERNAL_ERROR, self._closed_reason)
        msg_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}, future

    def is_waiting(self, msg_id: Any) -> bool:
        """True while the request with this id still wants an answer."""
        future = self._waiting.get(msg_id) if isinstance(msg_id, int) else None
        return future is not None and not future.done()

    def forget(self, msg_id: int) -> None:
        """Stop waiting for this id (the asker gave up)."""
        future = self._waiting.pop(msg_id, None)
        if future is not None and not future.done():
            future.cancel()

    def resolve(self, response: dict[str, Any]) -> bool:
        """Hand a response to its waiter; False when nobody waits for that id."""
        msg_id = response.get("id")
        if isinstance(msg_id, bool) or not isinstance(msg_id, int):
            return False
        future = self._waiting.pop(msg_id, None)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    def close(self, reason: str) -> None:
        """Fail every waiter with :class:`SessionClosed` and refuse new requests."""
        self._closed_reason = reason
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(SessionClosed(INTERNAL_ERROR, reason))
