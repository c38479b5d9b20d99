"""ToolResult: what a tool call produced, as Python objects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

from ..protocol.types import ContentBlock, TextContent, parse_content
from .renderers import RENDERERS, bundle, text_of_result


class ToolResult:
    """The outcome of a tool call (directly or through a task).

    ``content`` is the list of validated content blocks, ``structured`` the ``structuredContent``
    (or None), ``is_error`` the tool's own error flag, ``raw`` the result exactly as received.

    The result is kept once, as received: ``content`` is validated when the result arrives and its
    blocks are built from ``raw`` each time they are asked for, not kept beside it (issue 33 item 4:
    a 10,000-item sweep holds 10,000 results).
    """

    __slots__ = ("is_error", "raw", "structured")
    __hash__ = None  # type: ignore[assignment]

    structured: Any
    is_error: bool
    raw: dict[str, Any]

    def __init__(self, structured: Any, is_error: bool, raw: dict[str, Any]) -> None:
        object.__setattr__(self, "structured", structured)
        object.__setattr__(self, "is_error", is_error)
        object.__setattr__(self, "raw", raw)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ToolResult is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ToolResult is read-only: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return (self.structured, self.is_error, self.raw) == (other.structured, other.is_error, other.raw)

    @classmethod
    def from_wire(cls, result: dict[str, Any]) -> ToolResult:
        """Validate a CallToolResult (raises ValueError with the reason)."""
        parse_content(result.get("content", []))
        is_error = result.get("isError", False)
        if not isinstance(is_error, bool):
            raise ValueError("invalid tool result: 'isError' must be a boolean")
        return cls(result.get("structuredContent"), is_error, result)

    @property
    def content(self) -> Sequence[ContentBlock]:
        """The validated content blocks, each built from ``raw`` when read (validated once on arrival)."""
        return _Blocks(self.raw.get("content", []))

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


class _Blocks(Sequence[ContentBlock]):
    """A read-only list of content blocks over the raw ``content`` array, parsing one block per access
    (so walking a huge result holds one parsed block at a time, and nothing is kept)."""

    __slots__ = ("_raw",)

    def __init__(self, raw: list[Any]) -> None:
        self._raw = raw

    def __len__(self) -> int:
        return len(self._raw)

    @overload
    def __getitem__(self, i: int) -> ContentBlock: ...
    @overload
    def __getitem__(self, i: slice) -> list[ContentBlock]: ...
    def __getitem__(self, i: int | slice) -> ContentBlock | list[ContentBlock]:
        if isinstance(i, slice):
            return parse_content(self._raw[i])
        return parse_content([self._raw[i]])[0]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, _Blocks)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))
