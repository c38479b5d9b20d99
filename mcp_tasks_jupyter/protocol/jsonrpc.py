"""JSON-RPC 2.0 envelopes: parse what arrives, build what leaves. No I/O.

Inbound messages are checked by hand (it is the hottest path of the library and the errors are
clearer than a generic schema failure). Request ids are ``int | str``; ``0`` is a valid id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

RequestId = Union[int, str]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800


class MessageError(ValueError):
    """What arrived is not a JSON-RPC 2.0 message (the text says why)."""


@dataclass(slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(slots=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(slots=True)
class Response:
    id: RequestId
    result: dict[str, Any]


@dataclass(slots=True)
class ErrorResponse:
    id: RequestId | None
    code: int
    message: str
    data: Any = None


Message = Union[Request, Notification, Response, ErrorResponse]


def _params(obj: dict[str, Any]) -> dict[str, Any]:
    params = obj.get("params")
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise MessageError("'params' must be an object")
    return params


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def parse_message(obj: Any) -> Message:
    """Turn one decoded JSON value into a message, or raise MessageError."""
    if not isinstance(obj, dict):
        raise MessageError(f"expected a JSON object, got {type(obj).__name__}")
    if obj.get("jsonrpc") != "2.0":
        raise MessageError("missing or wrong 'jsonrpc' version (expected \"2.0\")")
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            raise MessageError("'method' must be a string")
        if "id" in obj:
            if not _valid_id(obj["id"]):
                raise MessageError("request 'id' must be a string or an integer")
            return Request(obj["id"], method, _params(obj))
        return Notification(method, _params(obj))
    if "id" not in obj:
        raise MessageError("message has neither 'method' nor 'id'")
    msg_id = obj["id"]
    if "error" in obj:
        err = obj["error"]
        if not isinstance(err, dict) or not isinstance(err.get("code"), int) \
                or not isinstance(err.get("message"), str):
            raise MessageError("'error' must be an object with an integer 'code' and a string 'message'")
        if msg_id is not None and not _valid_id(msg_id):
            raise MessageError("response 'id' must be a string, an integer or null")
        return ErrorResponse(msg_id, err["code"], err["message"], err.get("data"))
    if "result" not in obj:
        raise MessageError("response has neither 'result' nor 'error'")
    if not _valid_id(msg_id):
        raise MessageError("response 'id' must be a string or an integer")
    result = obj["result"]
    if not isinstance(result, dict):
        raise MessageError("'result' must be an object")
    return Response(msg_id, result)


def decode(data: bytes | str) -> list[Message]:
    """Decode one JSON text (a message or a batch) into messages; raise MessageError if invalid."""
    try:
        obj = json.loads(data)
    except ValueError as exc:
        raise MessageError(f"not valid JSON ({exc})") from None
    if isinstance(obj, list):
        if not obj:
            raise MessageError("empty batch")
        return [parse_message(item) for item in obj]
    return [parse_message(obj)]


#: One encoder for every message (``json.dumps`` with options builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode(obj: dict[str, Any]) -> bytes:
    """Serialise one outgoing message compactly."""
    return _ENCODER.encode(obj).encode()


def request(msg_id: RequestId, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result_response(msg_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_response(msg_id: RequestId | None, code: int, message: str,
                   data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}
