"""A ToolResult keeps the result once, as compact JSON text, and reads back what was received (issue 33 item
4: a sweep holds thousands of them; a decoded result's dicts, lists and keys take some eight times its text)."""

from __future__ import annotations

import copy
import gc

import pytest

from mcp_tasks_jupyter.protocol.types import TextContent, parse_content
from mcp_tasks_jupyter.tasks.results import KEPT_AS_TEXT_BYTES, ToolResult


def _raw() -> dict:
    return {"content": [{"type": "text", "text": "done 1"}, {"type": "text", "text": "x"}], "isError": False}


#: Results as servers send them: a sweep item's (text, structured content, the related-task tag), text beyond
#: ASCII, numbers JSON writes in more than one way, an error, images and resources, nesting.
RESULTS = [
    {
        "content": [{"type": "text", "text": "i3: done in 1 steps, value=1"}],
        "isError": False,
        "structuredContent": {"label": "i3", "steps": 1, "seconds": 0.05, "value": 1},
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "ElMYAvucPbAfGBKaYjjATw"}},
    },
    {"content": [{"type": "text", "text": 'Grüße, 世界 🌍 \u2028 \\ " \x00'}], "structuredContent": {"é": "ü"}},
    {
        "content": [],
        "structuredContent": {
            "floats": [0.1, 1e300, -0.0, 5e-324, 1.5, 2.0],
            "ints": [0, -1, 2**63 - 1, -(2**63)],
        },
    },
    {"content": [{"type": "text", "text": "no such file"}], "isError": True},
    {
        "content": [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "a", "mimeType": "text/plain"}},
        ],
        "structuredContent": {"rows": [{"a": 1, "b": [None, True, False, {"c": {"d": []}}]}] * 3},
        "_meta": {"x": {"y": [1, 2]}},
    },
    {"content": [{"type": "text", "text": "only text"}]},
    {"content": [{"type": "text", "text": "a list"}], "structuredContent": [1, "two", {"three": 3}]},
]


@pytest.mark.parametrize("raw", RESULTS)
def test_a_result_reads_back_what_was_received(raw: dict) -> None:
    received = copy.deepcopy(raw)
    res = ToolResult.from_wire(raw)
    assert res.raw == received and list(res.raw) == list(received)  # its keys in the order received too
    assert res.structured == received.get("structuredContent")
    assert res.is_error is received.get("isError", False)
    assert list(res.content) == parse_content(received["content"])
    assert res.text == "\n".join(b["text"] for b in received["content"] if b["type"] == "text")
    assert res.meta == received.get("_meta", {})
    assert res == ToolResult.from_wire(copy.deepcopy(received))
    # each read is a copy: changing it changes neither the result nor what the server's dict was
    res.raw["content"] = "changed"
    if isinstance(res.structured, dict):
        res.structured["added"] = 1
    assert res.raw == received and res.structured == received.get("structuredContent")


def test_the_result_is_kept_as_compact_text_not_as_decoded_json() -> None:
    res = ToolResult.from_wire(RESULTS[0])
    held = gc.get_referents(res)
    assert not any(isinstance(o, (dict, list)) for o in held), held  # no decoded tree: one bytes object
    assert [o for o in held if isinstance(o, bytes)] == [
        b'{"content":[{"type":"text","text":"i3: done in 1 steps, value=1"}],"isError":false,'
        b'"structuredContent":{"label":"i3","steps":1,"seconds":0.05,"value":1},'
        b'"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"ElMYAvucPbAfGBKaYjjATw"}}}'
    ]
    assert not hasattr(res, "__dict__")


def test_content_blocks_are_built_on_demand_and_not_kept() -> None:
    res = ToolResult.from_wire(_raw())
    assert [b.text for b in res.content if isinstance(b, TextContent)] == ["done 1", "x"]
    assert res.text == "done 1\nx"
    # Nothing the result refers to is a parsed block or a list of them.
    held = gc.get_referents(res)
    assert not any(isinstance(o, TextContent) for o in held)


def test_a_result_that_is_not_plain_json_is_kept_as_given() -> None:
    big = {"content": [], "structuredContent": {"n": 2**70}}  # beyond 64 bits: compact text could not say it
    res = ToolResult.from_wire(big)
    assert res.raw is big and res.structured == {"n": 2**70}


def test_a_long_result_is_kept_as_given_its_views_reading_it_without_decoding() -> None:
    long_text = {"content": [{"type": "text", "text": "x" * (KEPT_AS_TEXT_BYTES + 1)}]}
    many = {"content": [], "structuredContent": {"rows": list(range(10))} | {f"k{i}": i for i in range(2_000)}}
    for raw in (long_text, many):
        res = ToolResult.from_wire(raw)
        assert res.raw is raw and res.structured is raw.get("structuredContent")
    short = ToolResult.from_wire({"content": [{"type": "text", "text": "x" * (KEPT_AS_TEXT_BYTES - 100)}]})
    assert any(isinstance(o, bytes) for o in gc.get_referents(short))  # the longest kept as text


def test_equal_results_are_equal_whatever_the_order_of_their_keys() -> None:
    one = ToolResult.from_wire({"isError": False, "content": [], "structuredContent": {"a": 1, "b": 2}})
    other = ToolResult.from_wire({"content": [], "structuredContent": {"b": 2, "a": 1}, "isError": False})
    assert one == other
    assert one != ToolResult.from_wire({"content": [], "structuredContent": {"a": 1, "b": 3}})
    assert one != ToolResult.from_wire({"content": [], "structuredContent": {"a": 1, "b": 2}, "isError": True})


def test_a_structured_value_given_apart_from_the_result_is_kept() -> None:
    res = ToolResult({"given": True}, False, {"content": [], "structuredContent": {"other": 1}})
    assert res.structured == {"given": True} and res.raw["structuredContent"] == {"other": 1}


def test_still_validated_on_arrival_and_read_only() -> None:
    with pytest.raises(ValueError, match="content"):
        ToolResult.from_wire({"content": [{"text": "no type"}]})
    with pytest.raises(ValueError, match="isError"):
        ToolResult.from_wire({"content": [], "isError": "yes"})
    res = ToolResult.from_wire(_raw())
    for name in ("is_error", "raw", "structured", "content"):
        with pytest.raises(AttributeError):
            setattr(res, name, True)
    assert res == ToolResult.from_wire(_raw())
