"""A ToolResult keeps the result once, as received (issue 33 item 4: a sweep holds thousands of them)."""

from __future__ import annotations

import gc

import pytest

from mcp_tasks_jupyter.protocol.types import TextContent
from mcp_tasks_jupyter.tasks.results import ToolResult


def _raw() -> dict:
    return {"content": [{"type": "text", "text": "done 1"}, {"type": "text", "text": "x"}], "isError": False}


def test_content_blocks_are_built_on_demand_and_not_kept() -> None:
    raw = _raw()
    res = ToolResult.from_wire(raw)
    assert res.raw is raw
    assert [b.text for b in res.content if isinstance(b, TextContent)] == ["done 1", "x"]
    assert res.text == "done 1\nx"
    # Nothing the result refers to is a parsed block or a list of them: the only copy is ``raw``.
    held = gc.get_referents(res)
    assert not any(isinstance(o, TextContent) for o in held)
    assert not hasattr(res, "__dict__")


def test_still_validated_on_arrival_and_read_only() -> None:
    with pytest.raises(ValueError, match="content"):
        ToolResult.from_wire({"content": [{"text": "no type"}]})
    with pytest.raises(ValueError, match="isError"):
        ToolResult.from_wire({"content": [], "isError": "yes"})
    res = ToolResult.from_wire(_raw())
    with pytest.raises(AttributeError):
        res.is_error = True  # type: ignore[misc]
    assert res == ToolResult.from_wire(_raw())
