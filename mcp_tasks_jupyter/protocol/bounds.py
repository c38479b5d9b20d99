"""The limits this client puts on what a server sends: the numbers and strings it keeps and shows. No I/O.

A server is untrusted. A number it sends (a poll interval, a TTL) is checked (a finite, non-negative
number, not absurdly large) and then clamped to a range this client can live with, whatever the server
says; a string it sends is cut to a length a widget, a table and the task index can hold. Values that
make no sense at all (a negative poll interval, a task id of a megabyte) raise ValueError naming the field.
"""

from __future__ import annotations

import math
from typing import Any

#: Polls never come closer together than this, even when a server asks for 0 ms (a busy loop over
#: the wire), nor further apart than MAX_POLL_INTERVAL_MS, even when it asks for a day: a status the
#: client shows should be at most a minute old.
MIN_POLL_INTERVAL_MS = 100
MAX_POLL_INTERVAL_MS = 60_000
#: The longest TTL (retention) believed: one year. ``null`` still means unlimited (or unknown).
MAX_TTL_MS = 365 * 24 * 3600 * 1000
#: Beyond this a number of milliseconds is nonsense (about 285,000 years), and no longer exact as a
#: double: the value is refused rather than clamped.
MAX_MS = 2**53
#: A task id is an opaque key (UUIDs are 36 characters, this client's own ids 43); longer ones are refused.
MAX_TASK_ID_CHARS = 1024
#: What a server says about a task (``statusMessage``, an error's message): enough for a paragraph or
#: a short traceback; longer text is cut (with an ellipsis) before it reaches the widget or the index.
MAX_STATUS_MESSAGE_CHARS = 2000
#: Timestamps (``createdAt``, ``lastUpdatedAt``): an ISO 8601 string is about 30 characters.
MAX_TIMESTAMP_CHARS = 64
#: Pages of one paginated listing (tasks/list, tools/list) read before the walk stops: a server
#: that keeps sending fresh cursors must not keep the client listing for ever.
MAX_LIST_PAGES = 1000
#: How much of an offending value an error message quotes.
MAX_QUOTED_CHARS = 60

ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one an ellipsis when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def quoted(value: Any) -> str:
    """A short ``repr`` of an offending value, for an error message."""
    if isinstance(value, (dict, list)):
        return f"an {'object' if isinstance(value, dict) else 'array'}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**MAX_QUOTED_CHARS:
        return "a number too large to show"
    return clip(repr(value), MAX_QUOTED_CHARS)


def number(
    obj: dict[str, Any], key: str, what: str, *, unit: str = "milliseconds", limit: float = MAX_MS
) -> int | float | None:
    """``obj[key]`` checked to be a finite number in ``[0, limit]`` (absent or ``null``: None).

    Anything else (a bool, a string, an object, NaN, an infinity, a negative or absurd number) raises
    ValueError naming ``what`` and the field.
    """
    value = obj.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not math.isfinite(value))
        or value < 0
    ):
        raise ValueError(
            f"invalid {what}: {key!r} must be a finite, non-negative number of {unit}, got {quoted(value)}"
        )
    if value > limit:
        raise ValueError(
            f"invalid {what}: {key!r} must be at most {limit:.0f} {unit} (beyond any sensible "
            f"value), got {quoted(value)}"
        )
    return value


def poll_interval_ms(obj: dict[str, Any], key: str, what: str) -> int | None:
    """A server's poll interval, checked, in ``[MIN_POLL_INTERVAL_MS, MAX_POLL_INTERVAL_MS]``."""
    value = number(obj, key, what)
    if value is None:
        return None
    return min(MAX_POLL_INTERVAL_MS, max(MIN_POLL_INTERVAL_MS, int(value)))


def ttl_ms(obj: dict[str, Any], key: str, what: str) -> int | None:
    """A server's TTL (or keep-alive), checked, at most MAX_TTL_MS; None is unlimited or unknown."""
    value = number(obj, key, what)
    return None if value is None else min(MAX_TTL_MS, int(value))


def task_id(value: Any, what: str) -> str:
    """A task id from a server: a non-empty, printable string of at most MAX_TASK_ID_CHARS."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"invalid {what}: 'taskId' must be a non-empty string")
    if len(value) > MAX_TASK_ID_CHARS:
        raise ValueError(f"invalid {what}: 'taskId' is {len(value)} characters long (at most {MAX_TASK_ID_CHARS})")
    if not value.isprintable():
        # Control characters, line breaks, bidi overrides and lone surrogates: an id is shown in tables
        # and logs and sent back on the wire, where none of them belongs.
        raise ValueError(f"invalid {what}: 'taskId' must be printable text, got {quoted(value)}")
    return value


def text(obj: dict[str, Any], key: str, what: str, limit: int) -> str | None:
    """``obj[key]``: a string (cut to ``limit``) or None; anything else raises ValueError."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"invalid {what}: {key!r} must be a string, got {quoted(value)}")
    return clip(value, limit)
