"""HTTP request headers of the 2026-07-28 Streamable HTTP transport (SEP-2243). No I/O.

Every POST names its method in ``Mcp-Method``; ``Mcp-Name`` carries ``params.name`` (tools/call,
prompts/get), ``params.uri`` (resources/read) or ``params.taskId`` (tasks/get|update|cancel).
Tool parameters whose schema says ``"x-mcp-header": "Region"`` are mirrored as
``Mcp-Param-Region``. A value that is not plain printable ASCII without surrounding whitespace is
sent as ``=?base64?<base64 of its UTF-8>?=``.
"""

from __future__ import annotations

import base64
import re
from typing import Any

METHOD = "Mcp-Method"
NAME = "Mcp-Name"
PARAM_PREFIX = "Mcp-Param-"
ANNOTATION = "x-mcp-header"

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 field-name token
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
#: Keywords whose values are (maps or lists of) schemas; an annotation under any of them except
#: ``properties`` is not statically reachable, which makes the tool invalid.
_SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SUBSCHEMA_ONE = frozenset(
    {
        "additionalProperties",
        "items",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
    }
)
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})

#: A tool's mirrored parameters: (property path, header name without the prefix), in schema order.
ParamHeaders = tuple[tuple[tuple[str, ...], str], ...]


def encode_value(text: str) -> str:
    """A header value: as is when plain and safe, else the base64 sentinel form."""
    if (
        (text and (text[0] in " \t" or text[-1] in " \t"))
        or not _printable_ascii(text)
        or (text.startswith("=?base64?") and text.endswith("?="))
    ):
        return "=?base64?" + base64.b64encode(text.encode()).decode("ascii") + "?="
    return text


def _printable_ascii(text: str) -> bool:
    return all(0x20 <= ord(c) <= 0x7E for c in text)


def value_text(value: Any) -> str | None:
    """A parameter value as header text (None: no header, e.g. null or a non-primitive)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def param_headers(input_schema: dict[str, Any]) -> ParamHeaders:
    """The ``x-mcp-header`` declarations of a tool's input schema, validated.

    Raises ValueError naming the problem when any declaration is invalid (empty, not a header
    token, on a type other than string/integer/boolean, duplicated case-insensitively, or not
    reachable through ``properties`` alone): such a tool must not be offered.
    """
    found: list[tuple[tuple[str, ...], str]] = []
    _walk(input_schema, (), True, found)
    seen: set[str] = set()
    for _path, name in found:
        if name.lower() in seen:
            raise ValueError(f"x-mcp-header {name!r} is declared twice (header names ignore case)")
        seen.add(name.lower())
    return tuple(found)


def _walk(schema: Any, path: tuple[str, ...], reachable: bool, found: list[tuple[tuple[str, ...], str]]) -> None:
    if not isinstance(schema, dict):
        return
    if ANNOTATION in schema:
        where = ".".join(path) or "(root)"
        if not reachable or not path:
            raise ValueError(f"x-mcp-header at {where} is not reachable through 'properties' alone")
        name = schema[ANNOTATION]
        if not isinstance(name, str) or not name:
            raise ValueError(f"x-mcp-header at {where} is empty")
        if not _TOKEN.match(name):
            raise ValueError(f"x-mcp-header {name!r} at {where} is not a valid header name")
        kind = schema.get("type")
        if kind not in _HEADER_TYPES:
            raise ValueError(
                f"x-mcp-header {name!r} at {where} is on a property of type {kind!r} "
                f"(only string, integer and boolean may be mirrored)"
            )
        found.append((path, name))
    for keyword, value in schema.items():
        if keyword in _SUBSCHEMA_MAPS and isinstance(value, dict):
            chain = reachable and keyword == "properties"
            for prop, sub in value.items():
                _walk(sub, (*path, str(prop)) if chain else path, chain, found)
        elif keyword in _SUBSCHEMA_LISTS and isinstance(value, list):
            for sub in value:
                _walk(sub, path, False, found)
        elif keyword in _SUBSCHEMA_ONE:
            _walk(value, path, False, found)


def argument_headers(spec: ParamHeaders, arguments: dict[str, Any]) -> dict[str, str]:
    """``Mcp-Param-*`` headers for a call's arguments (a missing or null value: no header)."""
    headers: dict[str, str] = {}
    for path, name in spec:
        value: Any = arguments
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        text = value_text(value)
        if text is not None:
            headers[PARAM_PREFIX + name] = encode_value(text)
    return headers


def standard_headers(method: str, params: dict[str, Any] | None) -> dict[str, str]:
    """``Mcp-Method`` and, where the method has one, ``Mcp-Name``."""
    headers = {METHOD: method}
    key = _NAME_PARAM.get(method)
    if key is not None and params:
        value = params.get(key)
        if isinstance(value, str):
            headers[NAME] = encode_value(value)
    return headers
