"""What a tool's input schema says about argument names: which it knows, whether it takes others,
and the nearest known name to a mistyped one. Pure (no I/O); the client checks arguments with it
before sending, the notebook completer offers its names.
"""

from __future__ import annotations

import difflib
from typing import Any

#: Close names offered for a mistyped one, at most.
SUGGESTED = 3


def argument_names(schema: dict[str, Any] | None) -> list[str]:
    """The names in the schema's ``properties``, in the schema's order ([] when it has none)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return [name for name in properties if isinstance(name, str)] if isinstance(properties, dict) else []


def takes_other_names(schema: dict[str, Any] | None) -> bool:
    """Whether the schema allows names beyond its ``properties`` by saying so (``additionalProperties``
    true or a schema, or ``patternProperties``). A schema with no ``properties`` at all says nothing
    about names, so it takes any."""
    if not isinstance(schema, dict) or not argument_names(schema):
        return True
    extra = schema.get("additionalProperties")
    return extra is True or isinstance(extra, dict) or bool(schema.get("patternProperties"))


def unknown_names(schema: dict[str, Any] | None, arguments: dict[str, Any]) -> dict[str, list[str]]:
    """Each argument name the schema's ``properties`` lack, with the known names closest to it."""
    known = argument_names(schema)
    if not known:
        return {}
    return {
        name: difflib.get_close_matches(name, known, n=SUGGESTED, cutoff=0.6)
        for name in arguments
        if name not in known
    }


def unknown_names_text(tool: str, schema: dict[str, Any] | None, unknown: dict[str, list[str]]) -> str:
    """``tool 'x' has no argument 'secs' (did you mean 'seconds'?); its arguments: seconds, steps``."""
    parts = []
    for name, close in unknown.items():
        guess = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        parts.append(f"{name!r}{guess}")
    noun = "argument" if len(parts) == 1 else "arguments"
    return f"tool {tool!r} has no {noun} {', '.join(parts)}; its arguments: {', '.join(argument_names(schema))}"


__all__ = ["argument_names", "takes_other_names", "unknown_names", "unknown_names_text"]
