"""ToolResult: what a tool call produced, as Python objects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import orjson

from ..protocol.types import ContentBlock, TextContent, parse_content
from .renderers import RENDERERS, bundle, text_of_result

#: How a result is kept: compact JSON, written only from plain JSON values (a subclass of str, int, dict or
#: list, a datetime or a dataclass is not written as one: such a result is kept as it was given).
_KEPT_AS_JSON = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)
#: Results up to this long as compact JSON are kept as that text; a longer one as it was given (decoded): its
#: views read it a few times, and each read of a kept text decodes the whole of it.
KEPT_AS_TEXT_BYTES = 64 * 1024
#: A result with more content blocks, or more structured items at its top, than this is long: kept as given
#: without writing it first (what a long result would cost to write, for nothing).
KEPT_AS_TEXT_ITEMS = 1024
#: ``structured`` is the result's own ``structuredContent`` (nothing kept beside it).
_FROM_RAW: Any = object()


class ToolResult:
    """The outcome of a tool call (directly or through a task).

    ``content`` is the list of validated content blocks, ``structured`` the ``structuredContent``
    (or None), ``is_error`` the tool's own error flag, ``raw`` the result as received.

    The result is kept once (issue 33 item 4: a 10,000-item sweep holds 10,000 results): ``content`` is
    validated when the result arrives, and a result up to ``KEPT_AS_TEXT_BYTES`` is kept as compact JSON text
    (a decoded short result's dicts, lists and keys take some eight times its text), from which ``raw``,
    ``structured`` and ``content`` are decoded each time they are read: a new copy each time, equal to what was
    received. Bind what you read once (``rows = result.structured["rows"]``) rather than reading it again in a
    loop, and change a copy, never what you read. A longer result, or one that is not plain JSON data (built in
    Python with other types), is kept as it was given.
    """

    __slots__ = ("_kept", "_structured", "is_error")
    __hash__ = None  # type: ignore[assignment]

    _kept: bytes | dict[str, Any]
    _structured: Any
    is_error: bool

    def __init__(self, structured: Any, is_error: bool, raw: dict[str, Any]) -> None:
        kept: bytes | dict[str, Any] = raw
        if not _long(raw, structured):
            try:
                text = orjson.dumps(raw, option=_KEPT_AS_JSON)
            except TypeError:  # orjson.JSONEncodeError: not plain JSON (an integer beyond 64 bits, a set...)
                pass
            else:
                if len(text) <= KEPT_AS_TEXT_BYTES:
                    # copied to its own length: orjson's bytes keep the 4 KB it wrote into (271 for a sweep's)
                    kept = memoryview(text).tobytes()
        if structured is not None and structured is raw.get("structuredContent"):
            structured = _FROM_RAW
        object.__setattr__(self, "_kept", kept)
        object.__setattr__(self, "_structured", structured)
        object.__setattr__(self, "is_error", is_error)

    @property
    def raw(self) -> dict[str, Any]:
        """The result as received (``content``, ``structuredContent``, ``isError``, ``_meta``...); a new copy
        at each read where it is kept as text."""
        kept = self._kept
        return orjson.loads(kept) if isinstance(kept, bytes) else kept

    @property
    def structured(self) -> Any:
        """The ``structuredContent`` (None when there is none); a new copy at each read where it is kept as
        text."""
        if self._structured is _FROM_RAW:
            return self.raw.get("structuredContent")
        return self._structured

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


def _long(raw: dict[str, Any], structured: Any) -> bool:
    """Whether a result is long at its top (``KEPT_AS_TEXT_ITEMS``), told without walking it."""
    content = raw.get("content")
    if isinstance(content, list) and len(content) > KEPT_AS_TEXT_ITEMS:
        return True
    return isinstance(structured, (dict, list)) and len(structured) > KEPT_AS_TEXT_ITEMS


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
