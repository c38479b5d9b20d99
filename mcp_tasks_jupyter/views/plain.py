"""Plain-text pieces every view of a task shares: control characters escaped, a string cut to a length,
the first line of a text, the start of a result's text without joining it all, a content block's kind.
Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..protocol.types import TextContent

#: Characters of a result's text searched for its first line (the summary shows at most 120).
HEADLINE_CHARS = 4_096
#: Characters of the first line a summary shows.
FIRST_LINE_CHARS = 120


def plain(text: str) -> str:
    """Escape control characters (newlines, ANSI escapes) so a one-line form stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def cut(text: str, limit: int) -> tuple[str, int]:
    """The first ``limit`` characters of ``text``, and how many were left out."""
    limit = max(0, limit)
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def short(text: str | None, limit: int = 100) -> str | None:
    """A server's string shown inside our own words (a mime type, a block type): cut to ``limit``."""
    return text if text is None or len(text) <= limit else text[:limit] + "…"


def first_line(text: str | None) -> str:
    """The first line of ``text`` that is not blank, stripped, cut to :data:`FIRST_LINE_CHARS` ("…"
    when cut), control characters escaped; "" for none."""
    if not text:
        return ""
    for line in text.splitlines():
        if line.strip():
            line, left_out = cut(line.strip(), FIRST_LINE_CHARS)
            return plain(line) + ("…" if left_out else "")
    return ""


def text_head(content: Sequence[Any], limit: int) -> tuple[str, int]:
    """The first ``limit`` characters of the text blocks joined by newlines (``ToolResult.text``),
    and how many characters more that text has; without joining it all."""
    parts: list[str] = []
    size = total = 0
    first = True
    for block in content:
        if not isinstance(block, TextContent):
            continue
        if not first:  # the newline between two blocks
            total += 1
            if size < limit:
                parts.append("\n")
                size += 1
        first = False
        total += len(block.text)
        if size < limit:
            piece = block.text[: limit - size]
            parts.append(piece)
            size += len(piece)
    head = "".join(parts)
    return head, total - len(head)


def kind_of(block: Any) -> str:
    """A content block's kind: its mime type for an image or audio, else its type (``text``)."""
    mime = getattr(block, "mime_type", None)
    return mime if block.type in ("image", "audio") and isinstance(mime, str) else block.type


def json_text(value: Any) -> str:
    """``value`` as JSON text, non-ASCII characters as they are."""
    return json.dumps(value, ensure_ascii=False)


__all__ = [
    "FIRST_LINE_CHARS",
    "HEADLINE_CHARS",
    "cut",
    "first_line",
    "json_text",
    "kind_of",
    "plain",
    "short",
    "text_head",
]
