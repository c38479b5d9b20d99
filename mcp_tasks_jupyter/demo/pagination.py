"""Opaque cursors for paged list results (``tools/list``, ``tasks/list``)."""

from __future__ import annotations

import base64
import binascii
import json


class InvalidCursor(ValueError):
    """A cursor this server did not issue (or issued for another list)."""


def encode_cursor(kind: str, position: int) -> str:
    """A cursor meaning "continue after ``position``" in the list called ``kind``."""
    raw = json.dumps({"list": kind, "after": position}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, cursor: object) -> int:
    """The position a cursor from :func:`encode_cursor` carries; :class:`InvalidCursor` if bad."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > 200:
        raise InvalidCursor("Invalid cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidCursor("Invalid cursor") from None
    if not isinstance(data, dict) or data.get("list") != kind:
        raise InvalidCursor("Invalid cursor")
    position = data.get("after")
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise InvalidCursor("Invalid cursor")
    return position
