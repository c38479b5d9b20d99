"""ToolResult: what a tool call produced, as Python objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..protocol.types import ContentBlock, TextContent, parse_content
from .renderers import RENDERERS, bundle, text_of_result


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of a tool call (directly or through a task).

    ``content`` is the list of validated content blocks, ``structured`` the ``structuredContent``
    (or None), ``is_error`` the tool's own error flag, ``raw`` the result exactly as received.
    """

    content: list[ContentBlock]
    structured: Any
    is_error: bool
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_wire(cls, result: dict[str, Any]) -> ToolResult:
        """Validate a CallToolResult (raises ValueError with the reason)."""
        content = parse_content(result.get("content", []))
        is_error = result.get("isError", False)
        if not isinstance(is_error, bool):
            raise ValueError("invalid tool result: 'isError' must be a boolean")
        return cls(content, result.get("structuredContent"), is_error, result)

    @property
    def text(self) -> str:
        """All text blocks joined by newlines ("" when there are none)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.raw.get("_meta")
        return meta if isinstance(meta, dict) else {}

    def to_dataframe(self) -> Any:
        """The structured content as a pandas DataFrame: a list of records, or a mapping holding exactly
        one such list (a UsageError says what the content is otherwise). Needs pandas
        (``pip install 'mcp-tasks-jupyter[pandas]'``)."""
        from .result_frame import result_frame

        return result_frame(self)

    def __repr__(self) -> str:
        """Stable text: ``ToolResult(text='…', structured={…}, is_error=False)`` (see views/text.py)."""
        return text_of_result(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """Stable text and a self-contained HTML preview, for notebooks (no IPython needed)."""
        return bundle(text_of_result(self), RENDERERS.result_html, self)
