"""A tool result's structured content as a pandas DataFrame (``ToolResult.to_dataframe``): a list of
records, or a mapping holding exactly one such list; anything else is a UsageError saying what the content
is. pandas is imported only here and only when asked for (the ``pandas`` extra)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from .results import ToolResult

INSTALL_HINT = "pip install 'mcp-tasks-jupyter[pandas]'"


def pandas() -> Any:
    """The pandas module, or ImportError saying how to install it."""
    try:
        return importlib.import_module("pandas")
    except ImportError as exc:
        raise ImportError(f"DataFrames need pandas, which is not installed: {INSTALL_HINT} ({exc})") from None


def records_of(structured: Any) -> list[Mapping[str, Any]]:
    """The list of records in structured content, or UsageError saying why there is none."""
    rows: Any = structured
    if isinstance(structured, Mapping):
        lists = [(k, v) for k, v in structured.items() if _is_records(v)]
        if len(lists) != 1:
            keys = ", ".join(repr(k) for k, _ in lists)
            raise UsageError(
                "to_dataframe: the structured content is a mapping "
                + (f"with several lists of records ({keys}): pick one" if lists else "holding no list of records")
                + f" (keys: {_keys(structured)})"
            )
        rows = lists[0][1]
    if not _is_records(rows):
        raise UsageError(
            f"to_dataframe: the structured content is {_what(rows)}, not a list of records (mappings)"
        )
    return list(rows)


def result_frame(result: ToolResult) -> Any:
    """``result``'s structured content as a DataFrame (see the module docstring)."""
    if result.structured is None:
        raise UsageError(
            "to_dataframe: this result has no structured content (only content blocks); its text is result.text"
        )
    return pandas().DataFrame.from_records(records_of(result.structured))


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, Mapping) for item in value)


def _keys(mapping: Mapping[Any, Any]) -> str:
    keys = [repr(k) for k in list(mapping)[:10]]
    return ", ".join(keys) + (", …" if len(mapping) > 10 else "") if keys else "none"


def _what(value: Any) -> str:
    if isinstance(value, list):
        kinds = sorted({type(item).__name__ for item in value if not isinstance(item, Mapping)})
        return f"a list holding {', '.join(kinds)}"
    return f"a {type(value).__name__}"


__all__ = ["INSTALL_HINT", "pandas", "records_of", "result_frame"]
