"""A task named by its arguments: ``topic=tides depth=2``, short enough for a board row or a toast.

Twenty tasks of one tool differ only by their arguments, so every view that lists tasks (the board,
the compact widget, notifications, the "still running" line of an interrupted cell, a saved summary)
names each one by this label beside the tool. What tells them apart comes first, so the part a narrow
row cuts is the part they share: an explicit name (``label=``, ``name=``: :data:`NAME_KEYS`) leads, the
other arguments follow in the order they were given (``label=t3 seconds=40 steps=20``). Pure: no I/O.
Values of secret-looking keys never show (``redact.SECRET_KEY``), and registered secrets are scrubbed
from what is left.
"""

from __future__ import annotations

import json
from typing import Any

from ..redact import REDACTED, is_secret_key, scrub

#: The longest label, in characters (cut with "…").
LABEL_CHARS = 60
#: The longest single value inside a label.
VALUE_CHARS = 24
#: Argument names that name a call (``label=t3``): shown first, where no cut reaches them.
NAME_KEYS = ("label", "name")


def arguments_label(
    arguments: dict[str, Any] | None, limit: int = LABEL_CHARS, *, value_chars: int = VALUE_CHARS
) -> str:
    """``key=value`` words of ``arguments``, each value cut to ``value_chars``; "" for none. A naming
    argument (:data:`NAME_KEYS`) comes first, the rest in their given order."""
    if not arguments:
        return ""
    words = []
    for key, value in sorted(arguments.items(), key=lambda item: item[0] not in NAME_KEYS):
        shown = REDACTED if is_secret_key(str(key)) else _value(value, value_chars)
        words.append(f"{key}={shown}")
    text = scrub(" ".join(words))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value(value: Any, chars: int) -> str:
    if isinstance(value, str):
        text = value if value and not any(c.isspace() for c in value) else json.dumps(value, ensure_ascii=False)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def task_label(tool: str | None, arguments: dict[str, Any] | None) -> str:
    """``research topic=tides``: the tool and its arguments' label."""
    label = arguments_label(arguments)
    name = tool or "?"
    return f"{name} {label}" if label else name


__all__ = ["LABEL_CHARS", "NAME_KEYS", "arguments_label", "task_label"]
