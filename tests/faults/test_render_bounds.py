"""Bounded rendering (issue 11, item 9): a huge result renders a bounded, escaped preview everywhere.

Each case builds the result from a wire dict (``ToolResult.from_wire``, as a client does with what a
server sent) and checks every view of it: the HTML (``result_html``, the notebook's text/html), the
preview the live widget sends (its JSON), and the text repr. Each stays under
``preview.PREVIEW_BUDGET``, says how much it left out, and ``result.content`` keeps everything.
"""

from __future__ import annotations

import base64
import json
import re
import tracemalloc
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.views import (
    html as views_html,
    preview as views_preview,
    preview_html as views_preview_html,
    text as views_text,
)
from mcp_tasks_jupyter.views.install import install_renderers
from tests.jupyter.test_render import Markup, assert_safe

BUDGET = views_preview.PREVIEW_BUDGET
# Results made here without a client draw as a client's do (a client installs the views: Client.__init__).
install_renderers()
REPR_BOUND = 2_000  # the text repr: 200 characters of text, 8 content kinds, 200 of structure
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 12).decode()  # 4,108 base64 characters
MARKUP = '<script>alert("x")</script><img src=x onerror=alert(1)>'

pytestmark = pytest.mark.timeout(60)


def views(raw: dict[str, Any]) -> tuple[mtj.ToolResult, dict[str, Any], Markup]:
    """The result of ``raw``, its preview and its parsed HTML, each view checked against the bounds."""
    res = mtj.ToolResult.from_wire(raw)
    source = views_html.result_html(res)
    assert len(source.encode()) <= BUDGET, f"{len(source.encode()):,} bytes of HTML"
    preview = views_preview.result_preview(res)
    assert preview == json.loads(json.dumps(preview))  # plain JSON, as the widget sends it
    assert len(json.dumps(preview)) <= BUDGET, f"{len(json.dumps(preview)):,} bytes of widget JSON"
    bundle = res._repr_mimebundle_()
    assert bundle["text/html"] == source and bundle["text/plain"] == repr(res)
    assert len(repr(res)) <= REPR_BOUND, f"{len(repr(res)):,} characters of repr"
    return res, preview, assert_safe(source)


def tail_note(preview: dict[str, Any]) -> str:
    last = preview["blocks"][-1]
    assert last["kind"] == "note" and last["text"].startswith("… "), last
    return last["text"]


def test_ten_thousand_text_blocks_show_the_first_and_count_the_rest():
    texts = [f"line {i}" for i in range(10_000)]
    res, preview, markup = views({"content": [{"type": "text", "text": t} for t in texts]})
    shown = preview["blocks"][:-1]
    assert 0 < len(shown) <= views_preview.PREVIEW_BLOCKS
    assert shown == [{"kind": "text", "text": t, "cut": 0} for t in texts[: len(shown)]]
    rest = texts[len(shown) :]
    note = f"… {len(rest):,} more blocks not shown: text ×{len(rest):,} ({sum(map(len, rest)):,} characters)"
    assert tail_note(preview) == note and note in markup.text
    assert len(res.content) == 10_000 and res.text == "\n".join(texts)
    more = len(res.text) - views_text.TEXT_REPR_CHARS
    assert repr(res).endswith(f"… ({more:,} more characters), is_error=False)")  # only text: no kinds listed


def test_one_five_megabyte_text_block_is_cut_with_the_count_of_characters_left_out():
    text = "<&>\"'" * 1_000_000  # every character escapes to 4-6 in HTML
    res, preview, markup = views({"content": [{"type": "text", "text": text}]})
    [block] = preview["blocks"]
    assert block["text"] == text[: len(block["text"])] and len(block["text"]) == views_preview.PREVIEW_TEXT_CHARS
    assert block["cut"] == 5_000_000 - views_preview.PREVIEW_TEXT_CHARS
    assert f"{block['cut']:,} more characters not shown" in markup.text
    assert block["text"] in markup.text  # shown as text, not markup
    assert res.content[0].text == text and res.text == text
    assert repr(res).endswith(f"… ({5_000_000 - views_text.TEXT_REPR_CHARS:,} more characters), is_error=False)")


def test_two_thousand_images_fill_the_budget_and_count_the_rest():
    res, preview, markup = views({"content": [{"type": "image", "mimeType": "image/png", "data": PNG}] * 2_000})
    images = [b for b in preview["blocks"] if b["kind"] == "image"]
    assert len(images) == len(preview["blocks"]) - 1 and len(images) * len(PNG) <= BUDGET
    assert len(images) >= (BUDGET // 2) // len(PNG)  # the budget is used, not wasted
    rest = 2_000 - len(images)
    assert tail_note(preview) == f"… {rest:,} more blocks not shown: image/png ×{rest:,}"
    assert [a["src"] for tag, a in markup.tags if tag == "img"] == [f"data:image/png;base64,{PNG}"] * len(images)
    assert len(res.content) == 2_000 and all(b.data == PNG for b in res.content)
    assert repr(res) == "ToolResult(text='', content=[" + "image/png, " * 8 + "… 1,992 more], is_error=False)"


def test_an_image_bigger_than_the_budget_is_a_note_and_the_blocks_after_it_still_show():
    huge = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 4_500_000).decode()  # 6 MB of base64
    res, preview, markup = views(
        {
            "content": [
                {"type": "image", "mimeType": "image/png", "data": huge},
                {"type": "text", "text": "after"},
                {"type": "image", "mimeType": "image/png", "data": PNG},
            ]
        }
    )
    note, text, image = preview["blocks"]
    assert note == {
        "kind": "note",
        "text": f"image (image/png, {len(huge) * 3 // 4:,} bytes) too large to show: "
        f"a preview holds {BUDGET:,} bytes (preview.PREVIEW_BUDGET)",
    }
    assert text["text"] == "after" and image == {"kind": "image", "mime": "image/png", "data": PNG}
    assert [a["src"] for tag, a in markup.tags if tag == "img"] == [f"data:image/png;base64,{PNG}"]
    assert res.content[0].data == huge


def check_tree(node: dict[str, Any], value: Any) -> int:
    """The preview ``node`` is a faithful start of ``value``: every container counts all its
    entries (shown + more), keys and strings are starts of the real ones. Returns the nodes seen."""
    if node["t"] == "cut":
        assert node["n"] == len(value)
        return 1
    if node["t"] == "v":
        if isinstance(value, str):
            assert value.startswith(node["v"]) and node["cut"] == len(value) - len(node["v"])
        else:
            assert node["v"] == value
        return 1
    assert len(node["items"]) + node["more"] == len(value)
    seen = 1
    if node["t"] == "o":
        for (label, child), (key, child_value) in zip(node["items"], value.items(), strict=False):
            assert label == key or (label.endswith("…") and key.startswith(label[:-1]))
            seen += check_tree(child, child_value)
    else:
        for child, child_value in zip(node["items"], value, strict=False):
            seen += check_tree(child, child_value)
    return seen


def test_structured_content_with_a_hundred_thousand_nested_keys_is_bounded():
    row = {"name": "n" * 1_000, "values": list(range(100))}
    shared = {"rows": [row] * 100, "title": "t"}
    value = {"K" * 1_000_000: 1, **{f"k{i}": shared for i in range(100_000)}}
    res, preview, markup = views({"content": [], "structuredContent": value})
    node = preview["structured"]["node"]
    assert preview["structured"]["kind"] == "tree" and check_tree(node, value) > 10
    first_label = node["items"][0][0]
    assert first_label == "K" * views_preview.TREE_STRING + "…"
    assert node["more"] == len(value) - len(node["items"])
    assert f"… {node['more']:,} more not shown" in markup.text
    assert "{100001 keys}" in markup.text
    assert res.structured is value and len(res.structured) == 100_001


def test_deep_nesting_is_bounded_in_depth_and_size():
    wide: dict[str, Any] = {"leaf": True}
    for _ in range(10_000):  # each level: 49 strings of 1,000 characters, then the next level
        wide = {**{f"s{j}": "w" * 1_000 for j in range(49)}, "next": wide}
    chain: list[Any] = []
    for _ in range(100_000):
        chain = [chain]
    value = {"chain": chain, "wide": wide}
    res, preview, markup = views({"content": [], "structuredContent": value})
    top = preview["structured"]["node"]
    check_tree(top, value)
    node, depth = dict(top["items"])["chain"], 1
    while node["t"] == "a":
        node, depth = node["items"][0], depth + 1
    assert node == {"t": "cut", "kind": "array", "n": 1} and depth == views_preview.TREE_DEPTH
    assert "[1 items] (too deep to show)" in markup.text
    assert res.structured["chain"] is chain and res.structured["wide"] is wide


def test_a_huge_table_shows_the_rows_and_columns_that_fit():
    rows = [{f"c{j}": f"{i}:{'v' * 500}" for j in range(40)} for i in range(2_000)]
    res, preview, markup = views({"content": [], "structuredContent": rows})
    table = preview["structured"]
    assert table["kind"] == "table" and table["columns"] == [f"c{j}" for j in range(views_preview.TABLE_COLUMNS)]
    assert 0 < len(table["rows"]) < views_preview.TABLE_ROWS and table["more_rows"] == 2_000 - len(table["rows"])
    assert table["more_columns"] == 40 - views_preview.TABLE_COLUMNS
    assert table["rows"][0][0] == rows[0]["c0"]
    assert f"{table['more_rows']:,} more rows not shown; 10 more columns not shown" in markup.text
    assert res.structured is rows


def mixed_result(repeat: int = 3_000, big: int = 1_000, nested: bool = True) -> dict[str, Any]:
    """Everything at once, with markup wherever a server can put a string: 5 MB of text in 2.5
    million lines, then ``repeat`` times text, image, links, resource, audio and an unknown block
    with strings of ``big`` times MARKUP, and 100,000 structured keys (``nested``: each with an
    object of 100 strings). Long strings are shared, so the dict is small in memory."""
    long = MARKUP * big
    content: list[dict[str, Any]] = [{"type": "text", "text": "x\n" * 2_500_000}]
    for i in range(repeat):
        content += [
            {"type": "text", "text": f"{i} {MARKUP}"},
            {"type": "image", "mimeType": "image/png", "data": PNG},
            {"type": "resource_link", "uri": f"https://example.org/{i}?q={MARKUP}", "name": MARKUP},
            {"type": "resource_link", "uri": f"javascript:{long}", "name": long},
            {"type": "resource", "resource": {"uri": MARKUP, "text": long, "mimeType": long}},
            {"type": "audio", "mimeType": long, "data": "AAAA"},
            {"type": long},
        ]
    inner = {MARKUP: [MARKUP] * 100}
    structured = {long: long * 10, **{f"{MARKUP}{i}": inner if nested else i for i in range(100_000)}}
    return {"content": content, "structuredContent": structured, "isError": True}


def test_a_mix_of_everything_with_markup_is_bounded_and_stays_text():
    raw = mixed_result()
    res, preview, markup = views(raw)
    source = views_html.result_html(res)
    assert (
        "<script" not in source
        and "<img src=x" not in source
        and "javascript:" not in "".join(a.get("href") or "" for tag, a in markup.tags if tag == "a")
    )
    assert MARKUP in markup.text  # the server's markup is shown, as text
    shown = len(preview["blocks"]) - 1
    rest = raw["content"][shown:]
    texts = [b["text"] for b in rest if b["type"] == "text"]
    assert tail_note(preview).startswith(
        f"… {len(rest):,} more blocks not shown: text ×{len(texts):,} "
        f"({sum(map(len, texts)):,} characters), image/png ×"
    )
    assert len(res.content) == len(raw["content"]) == 21_001 and res.raw is raw
    assert preview["structured"]["node"]["more"] == 100_001 - len(preview["structured"]["node"]["items"])
    assert "the tool reported an error" in markup.text
    for block in preview["blocks"]:  # every string a server sent is cut
        for value in block.values():
            assert not isinstance(value, str) or len(value) <= max(views_preview.PREVIEW_TEXT_CHARS, len(PNG))


def test_rendering_a_huge_result_takes_memory_in_proportion_to_the_budget_not_the_result():
    res = mtj.ToolResult.from_wire(mixed_result())
    tracemalloc.start()
    try:
        views_html.result_html(res)
        views_preview.result_preview(res)
        repr(res)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * BUDGET, f"{peak:,} bytes allocated at the peak"


@pytest.mark.parametrize("budget", [0, 100, 1_000, 5_000])
def test_a_small_budget_still_gives_a_valid_preview_within_it(budget):
    res = mtj.ToolResult.from_wire(mixed_result())
    preview = views_preview.result_preview(res, budget=budget)
    source = views_preview_html.preview_html(preview)
    assert_safe(source)
    if budget >= 1_000:  # below that only the frame and the notes are left, which may be a bit more
        assert len(source.encode()) <= budget and len(json.dumps(preview)) <= budget
    assert re.match(r"… [\d,]+ more blocks? not shown", preview["blocks"][-1]["text"])
