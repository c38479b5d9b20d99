"""Minimal JSON Schema checks for tool arguments (the subset the demo tools' schemas use).

Supported keywords: ``type`` (string, number, integer, boolean, array, object), ``enum``,
``minimum``/``maximum``, ``minLength``/``maxLength``, ``minItems``/``maxItems``, ``items``,
``required`` and ``default`` (filled in for missing properties). Unknown arguments are ignored.
"""

from __future__ import annotations

import copy
import math
from typing import Any


class ArgumentError(ValueError):
    """Arguments that do not fit the tool's input schema; the message says which and why."""


def validate_arguments(schema: dict[str, Any], arguments: object) -> dict[str, Any]:
    """Checked arguments with defaults filled in; :class:`ArgumentError` when they do not fit."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ArgumentError("arguments must be a JSON object")
    required = set(schema.get("required", ()))
    checked: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if name in arguments:
            checked[name] = _check(name, prop, arguments[name])
        elif "default" in prop:
            checked[name] = copy.deepcopy(prop["default"])
        elif name in required:
            raise ArgumentError(f"missing required argument '{name}'")
    return checked


def _check(path: str, schema: dict[str, Any], value: Any) -> Any:
    kind = schema.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise ArgumentError(f"'{path}' must be a string")
        if len(value) < schema.get("minLength", 0):
            raise ArgumentError(f"'{path}' must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ArgumentError(f"'{path}' must have at most {schema['maxLength']} characters")
    elif kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ArgumentError(f"'{path}' must be {'an integer' if kind == 'integer' else 'a number'}")
        if kind == "integer":
            if isinstance(value, float) and not value.is_integer():
                raise ArgumentError(f"'{path}' must be an integer")
            value = int(value)
        if "minimum" in schema and value < schema["minimum"]:
            raise ArgumentError(f"'{path}' must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ArgumentError(f"'{path}' must be <= {schema['maximum']}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise ArgumentError(f"'{path}' must be a boolean")
    elif kind == "array":
        if not isinstance(value, list):
            raise ArgumentError(f"'{path}' must be an array")
        if len(value) < schema.get("minItems", 0):
            raise ArgumentError(f"'{path}' must have at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ArgumentError(f"'{path}' must have at most {schema['maxItems']} items")
        if "items" in schema:
            value = [_check(f"{path}[{i}]", schema["items"], item) for i, item in enumerate(value)]
    elif kind == "object" and not isinstance(value, dict):
        raise ArgumentError(f"'{path}' must be an object")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(choice) for choice in schema["enum"])
        raise ArgumentError(f"'{path}' must be one of {choices}")
    return value
