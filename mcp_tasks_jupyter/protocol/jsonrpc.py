"""JSON-RPC 2.0 envelopes: parse what arrives, build what leaves. No I/O.

Inbound messages are checked by hand (it is the hottest path of the library and the errors are
clearer than a generic schema failure). Request ids are ``int | str``; ``0`` is a valid id.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

from . import bounds

RequestId = int | str

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

#: The limits of ``decode``. Values nest at most MAX_DEPTH levels: any schema or result seen is far
#: shallower, and code that walks a value recursively (rendering, the task index's JSON) keeps ample
#: room below the interpreter's recursion limit.
MAX_DEPTH = 128
#: A batch holds at most this many messages (servers send batches rarely, and short ones).
MAX_BATCH = 1000
#: An integer literal has at most this many characters: every integer then converts to a float
#: (doubles reach 1.8e308), and parsing stays linear whatever ``sys.set_int_max_str_digits`` says.
MAX_INT_CHARS = 300
#: The longest string id ``answered_id`` recovers from an unreadable answer (this client's ids are integers).
MAX_ID_CHARS = 200
#: A JSON-RPC error's message is cut to this length (it is shown to users).
MAX_ERROR_MESSAGE_CHARS = bounds.MAX_STATUS_MESSAGE_CHARS


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


Message = Request | Notification | Response | ErrorResponse


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
        if (
            not isinstance(err, dict)
            or not isinstance(err.get("code"), int)
            or not isinstance(err.get("message"), str)
        ):
            raise MessageError("'error' must be an object with an integer 'code' and a string 'message'")
        if msg_id is not None and not _valid_id(msg_id):
            raise MessageError("response 'id' must be a string, an integer or null")
        return ErrorResponse(
            msg_id, err["code"], bounds.clip(err["message"], MAX_ERROR_MESSAGE_CHARS), err.get("data")
        )
    if "result" not in obj:
        raise MessageError("response has neither 'result' nor 'error'")
    if type(msg_id) is not int and not _valid_id(msg_id):
        raise MessageError("response 'id' must be a string or an integer")
    result = obj["result"]
    if not isinstance(result, dict):
        raise MessageError("'result' must be an object")
    return Response(msg_id, result)


def decode(data: bytes | str) -> list[Message]:
    """Decode one JSON text (a message or a batch) into messages; raise MessageError if invalid.

    Stricter than ``json.loads``: bytes must be UTF-8; ``NaN`` and the infinities are refused (they are
    not JSON), and so are numbers too large for a double, integers longer than MAX_INT_CHARS, unpaired
    surrogate escapes (text that cannot be sent back as UTF-8), values nested deeper than MAX_DEPTH and
    batches longer than MAX_BATCH. Whatever arrives, the only exception is MessageError.
    """
    obj = _fast_loads(data if isinstance(data, (bytes, bytearray)) else _utf8(data))
    if obj is _UNSURE:  # orjson might read it otherwise (or text that is not Unicode)
        obj = _strict_loads(data)
    return [parse_message(obj)] if type(obj) is dict else _messages(obj)


def _messages(obj: Any) -> list[Message]:
    """The messages of a decoded JSON value: one, or a bounded batch."""
    if isinstance(obj, list):
        if not obj:
            raise MessageError("empty batch")
        if len(obj) > MAX_BATCH:
            raise MessageError(f"a batch of {len(obj)} messages (at most {MAX_BATCH})")
        return [parse_message(item) for item in obj]
    return [parse_message(obj)]


def _strict_loads(data: bytes | bytearray | str) -> Any:
    """The JSON value of ``data``, by the standard library's decoder with every check of ``decode``."""
    try:
        if isinstance(data, (bytes, bytearray)):
            text = data.decode("utf-8-sig") if data.startswith(_BOM) else data.decode()
        else:
            text = data
        obj = _DECODER.decode(text)
    except MessageError:
        raise
    except RecursionError:
        raise MessageError(f"not valid JSON (nested deeper than {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise MessageError(f"not valid JSON ({bounds.clip(str(exc), 200)})") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(obj, MAX_DEPTH):
        raise MessageError(f"not valid JSON (nested deeper than {MAX_DEPTH} levels)")
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None and not _encodable(obj):
        raise MessageError("not valid JSON (an unpaired UTF-16 surrogate escape: not Unicode text)")
    return obj


def _utf8(text: str) -> bytes:
    """``text`` in UTF-8 for ``_fast_loads`` (an SSE event's data comes as text); text holding a lone
    surrogate has none, and goes the strict way whole."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _NOT_UTF8


def _fast_loads(data: bytes | bytearray) -> Any:
    """The JSON value of ``data`` by orjson (a fifth of the standard decoder's time), where it is
    sure to be the strict decoder's value; else _UNSURE, and ``_strict_loads`` decides (and names
    the fault in its own words).

    orjson refuses what the strict decoder refuses (NaN and the infinities, numbers beyond a double,
    invalid UTF-8, unpaired surrogates, a BOM), and its value is the same, except for an integer
    beyond 64 bits, which it turns into a float: text with 19 digits in a row goes the strict way.
    """
    if _DIGIT_RUN in data.translate(_DIGITS):
        return _UNSURE
    try:
        obj = orjson.loads(data)
    except ValueError:  # orjson.JSONDecodeError
        return _UNSURE
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and _deeper_than(obj, MAX_DEPTH):
        raise MessageError(f"not valid JSON (nested deeper than {MAX_DEPTH} levels)")
    return obj


def answered_id(data: bytes | str) -> RequestId | None:
    """The ``id`` of the request an unreadable answer was meant for, or None when it shows none.

    For a message that ``decode`` refused: a tolerant second parse that keeps every number as text, so a
    value too large for a double (``1e400``) or an overlong integer no longer hides the top-level ``id``
    of an object carrying ``result`` or ``error`` (and no ``method``: a request is not an answer). Only a
    string or integer id of bounded size is returned; anything else, including text that is not JSON at
    all, gives None.
    """
    try:
        text = data.decode("utf-8-sig", errors="replace") if isinstance(data, (bytes, bytearray)) else data
        obj = _TOLERANT_DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or "method" in obj or ("result" not in obj and "error" not in obj):
        return None
    msg_id = obj.get("id")
    if type(msg_id) is str and len(msg_id) <= MAX_ID_CHARS:
        return msg_id
    if isinstance(msg_id, _IntText) and len(msg_id) <= MAX_INT_CHARS:
        return int(msg_id)
    return None


class _IntText(str):
    """An integer literal kept as text by the tolerant decoder (so a string id never passes for one)."""


class _NumText(str):
    """Any other number (or NaN/Infinity) kept as text by the tolerant decoder; never an id."""


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in _INFINITIES:
        raise MessageError(f"not valid JSON (the number {bounds.clip(literal, 40)} is too large for a double)")
    return value


def _bounded_int(literal: str) -> int:
    if len(literal) > MAX_INT_CHARS:
        raise MessageError(f"not valid JSON (an integer of {len(literal)} digits; at most {MAX_INT_CHARS})")
    return int(literal)


def _no_constant(name: str) -> Any:
    raise MessageError(f"not valid JSON ({name} is not a JSON number)")


def _deeper_than(obj: Any, limit: int) -> bool:
    """Whether containers nest more than ``limit`` levels (the outermost is level 1); level by level,
    without recursion."""
    level = [obj]
    for _depth in range(limit):
        level = [
            child
            for value in level
            for child in (value.values() if type(value) is dict else value)
            if type(child) in _CONTAINERS
        ]
        if not level:
            return False
    return True


def _encodable(obj: Any) -> bool:
    try:
        _ENCODER.encode(obj).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_BOM = b"\xef\xbb\xbf"
_UNSURE = object()
_NOT_UTF8 = b"\xff"  # orjson refuses it: the caller decodes the text itself
#: Every digit becomes "0" and every other byte a space: 19 digits in a row may be an integer that
#: orjson cannot hold (it holds every integer of up to 18 digits exactly).
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_DIGIT_RUN = b"0" * 19
_INFINITIES = (math.inf, -math.inf)
_CONTAINERS = (dict, list)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_no_constant)
_TOLERANT_DECODER = json.JSONDecoder(parse_float=_NumText, parse_int=_IntText, parse_constant=_NumText)


#: One encoder for every message (``json.dumps`` with options builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode(obj: dict[str, Any]) -> bytes:
    """Serialise one outgoing message compactly."""
    return _ENCODER.encode(obj).encode()


def encode_request(msg_id: RequestId, method: str, params: dict[str, Any] | None) -> bytes:
    """``encode(request(msg_id, method, params))``, byte for byte, built from a per-method template:
    only the id and the parameters are encoded per call (a poll's ``{"taskId": ...}`` by hand)."""
    template = _TEMPLATES.get(method)
    if template is None:
        template = _template(method)
    if type(msg_id) is int:
        head = template[0] % msg_id
    elif type(msg_id) is str:
        head = template[1] % _encode_str(msg_id).encode()
    else:
        return encode(request(msg_id, method, params))
    if params is None:
        return head + b"}"
    if len(params) == 1:
        ((key, value),) = params.items()
        if type(key) is str and type(value) is str:
            return b'%s,"params":{%s:%s}}' % (head, _encode_str(key).encode(), _encode_str(value).encode())
    return b'%s,"params":%s}' % (head, _ENCODER.encode(params).encode())


def _template(method: str) -> tuple[bytes, bytes]:
    """The fixed parts of a request for ``method``: with an integer id, with a string id."""
    name = _encode_str(method).encode().replace(b"%", b"%%")
    template = (b'{"jsonrpc":"2.0","id":%d,"method":' + name, b'{"jsonrpc":"2.0","id":%s,"method":' + name)
    if len(_TEMPLATES) < MAX_TEMPLATES:
        _TEMPLATES[method] = template
    return template


#: Methods whose request template is kept (this client sends a few dozen methods at most).
MAX_TEMPLATES = 256
_TEMPLATES: dict[str, tuple[bytes, bytes]] = {}
_encode_str = json.encoder.encode_basestring  # what _ENCODER uses for strings (ensure_ascii=False)


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


def error_response(msg_id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}
