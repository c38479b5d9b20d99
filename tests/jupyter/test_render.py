"""views/text.py, preview.py and html.py: stable text forms and safe, self-contained HTML for tasks and results."""

from __future__ import annotations

import asyncio
import base64
import re
from html.parser import HTMLParser

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.jupyter.display import summary_bundle
from mcp_tasks_jupyter.tasks import renderers
from mcp_tasks_jupyter.views import html as views_html, preview as views_preview, text as views_text
from mcp_tasks_jupyter.views.install import install_renderers
from mcp_tasks_jupyter.views.view import view_of

from .conftest import HOSTILE, WAIT, demo_client

# Results made here without a client draw as a client's do (a client installs the views: Client.__init__).
install_renderers()

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
ALLOWED_TAGS = {
    "div",
    "span",
    "b",
    "pre",
    "code",
    "details",
    "summary",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "img",
    "a",
}
IMAGE_SRC = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$")


class Markup(HTMLParser):
    """What a browser would build from an HTML string: its tags, attributes and text."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""
        self.feed(source)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text += data


def assert_safe(source: str, extra: set[str] | frozenset[str] = frozenset()) -> Markup:
    """Only our own tags (and ``extra``); no event handlers, no scripts, images only as allowed data
    URIs, links only to http(s)."""
    markup = Markup(source)
    for tag, attrs in markup.tags:
        assert tag in ALLOWED_TAGS | extra, f"unexpected <{tag}> in {source[:300]}"
        assert not [a for a in attrs if a.startswith("on")], f"event handler on <{tag}>: {attrs}"
        if tag == "img":
            assert IMAGE_SRC.match(attrs["src"] or ""), attrs["src"]
        if tag == "a":
            assert (attrs["href"] or "").startswith(("http://", "https://")), attrs["href"]
    return markup


def result(raw: dict) -> mtj.ToolResult:
    return mtj.ToolResult.from_wire(raw)


# -- escaping -------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_result_text_keys_values_and_mime_types_are_text_not_markup(bad):
    res = result(
        {
            "content": [
                {"type": "text", "text": bad},
                {"type": "image", "mimeType": f"image/png{bad}", "data": PNG},
                {"type": "image", "mimeType": "image/png", "data": bad},
                {"type": "audio", "mimeType": bad, "data": "AAAA"},
                {"type": "resource_link", "uri": f"javascript:{bad}", "name": bad},
                {"type": "resource", "resource": {"uri": bad, "text": bad}},
                {"type": bad},
            ],
            "structuredContent": {bad: {bad: [bad, {"k": bad}]}, "rows": [{bad: bad}]},
        }
    )
    markup = assert_safe(views_html.result_html(res))
    assert markup.text.count(bad) >= 6  # shown, as text
    assert not any(tag == "img" for tag, _ in markup.tags)  # neither image is acceptable
    assert not any(tag == "a" for tag, _ in markup.tags)  # javascript: is no link
    table = assert_safe(views_html.result_html(result({"content": [], "structuredContent": [{bad: bad}]})))
    assert any(tag == "table" for tag, _ in table.tags) and table.text.count(bad) == 2


@pytest.mark.anyio
async def test_hostile_server_name_status_message_result_and_failure_are_escaped():
    bad = HOSTILE[1]
    async with demo_client("--poll-interval", "100", name=HOSTILE[0]) as client:
        task = await client.start_task("slow_compute", {"seconds": 0.6, "steps": 3, "label": bad})
        await asyncio.sleep(0.3)
        assert bad in (task.status_message or "")
        for source in (
            views_html.task_html(view_of(task)),
            views_html.running_html(view_of(task)),
            summary_bundle(task)["text/html"],
        ):
            markup = assert_safe(source)
            assert HOSTILE[0] in markup.text
        assert bad in assert_safe(views_html.task_html(view_of(task))).text
        await asyncio.wait_for(task, WAIT)
        for source in (
            views_html.task_html(view_of(task)),
            views_html.summary_html(view_of(task)),
            task._repr_mimebundle_()["text/html"],
        ):
            markup = assert_safe(source)
            assert bad in markup.text and HOSTILE[0] in markup.text

        failing = await client.start_task(
            "failing_job", {"seconds": 0.1, "mode": "protocol_error", "message": bad}
        )
        with pytest.raises(mtj.TaskFailed):
            await asyncio.wait_for(failing, WAIT)
        for source in (views_html.task_html(view_of(failing)), views_html.summary_html(view_of(failing))):
            assert bad in assert_safe(source).text

        # The tool name is the caller's label for an attached task: escaped all the same.
        attached = client.attach("no-such-task", tool=HOSTILE[0])
        with pytest.raises(mtj.TaskNotFound):
            await asyncio.wait_for(attached, WAIT)
        for source in (views_html.task_html(view_of(attached)), views_html.summary_html(view_of(attached))):
            assert HOSTILE[0] in assert_safe(source).text
        assert "<TaskHandle <script>" in views_text.task_text(view_of(attached))  # plain text stays as sent


# -- images and links -----------------------------------------------------------------------------


@pytest.mark.parametrize("mime", ["image/png", "image/jpeg", "image/gif", "image/webp"])
def test_allowed_image_types_with_valid_base64_become_data_uris(mime):
    markup = assert_safe(
        views_html.result_html(result({"content": [{"type": "image", "mimeType": mime, "data": PNG}]}))
    )
    assert [a["src"] for tag, a in markup.tags if tag == "img"] == [f"data:{mime};base64,{PNG}"]


@pytest.mark.parametrize(
    "mime,data",
    [
        ("image/svg+xml", PNG),
        ("text/html", PNG),
        ("image/png", "not base64!"),
        ("image/png", PNG + "\n<x>"),
        ("IMAGE/PNG", PNG),
    ],
)
def test_other_images_are_a_note_not_an_image(mime, data):
    preview = views_preview.result_preview(
        result({"content": [{"type": "image", "mimeType": mime, "data": data}]})
    )
    assert preview["blocks"][0]["kind"] == "note"
    markup = assert_safe(
        views_html.result_html(result({"content": [{"type": "image", "mimeType": mime, "data": data}]}))
    )
    assert not any(tag == "img" for tag, _ in markup.tags) and mime in markup.text


def test_resource_links_are_live_only_for_http():
    links = [
        {"type": "resource_link", "uri": uri, "name": f"n{i}"}
        for i, uri in enumerate(
            [
                "https://example.org/a?b=1&c=2",
                "http://x.test/",
                "file:///etc/passwd",
                "javascript:alert(1)",
                "data:text/html,<script>",
            ]
        )
    ]
    markup = assert_safe(views_html.result_html(result({"content": links})))
    assert [a["href"] for tag, a in markup.tags if tag == "a"] == [
        "https://example.org/a?b=1&c=2",
        "http://x.test/",
    ]
    assert "file:///etc/passwd" in markup.text and "javascript:alert(1)" in markup.text


# -- truncation -----------------------------------------------------------------------------------


def test_huge_text_is_cut_with_a_note_of_how_much():
    text = "x" * (views_preview.PREVIEW_TEXT_CHARS + 12_345)
    res = result({"content": [{"type": "text", "text": text}, {"type": "text", "text": "more"}]})
    preview = views_preview.result_preview(res)
    assert [b["cut"] for b in preview["blocks"]] == [12_345, 0]  # the limit is per block
    assert (
        len(preview["blocks"][0]["text"]) == views_preview.PREVIEW_TEXT_CHARS
        and preview["blocks"][1]["text"] == "more"
    )
    assert "12,345 more characters not shown" in Markup(views_html.result_html(res)).text
    more = len(res.text) - views_text.TEXT_REPR_CHARS
    assert views_text.result_text(res) == (
        f"ToolResult(text={'x' * views_text.TEXT_REPR_CHARS!r}… ({more:,} more characters), is_error=False)"
    )


def test_huge_structures_are_bounded():
    deep: dict = {"leaf": 1}
    for i in range(20):
        deep = {f"level{i}": deep}
    wide = {"items": list(range(5000)), "deep": deep, "long": "y" * 50_000}
    node = views_preview.structured_preview(wide)["node"]
    items = dict(node["items"])
    assert (
        len(items["items"]["items"]) == views_preview.TREE_ITEMS
        and items["items"]["more"] == 5000 - views_preview.TREE_ITEMS
    )
    assert items["long"]["cut"] == 50_000 - views_preview.TREE_STRING
    assert (
        "too deep to show"
        in Markup(views_html.result_html(result({"content": [], "structuredContent": wide}))).text
    )
    rows = [{"i": i} for i in range(views_preview.TABLE_ROWS + 7)]
    table = views_preview.structured_preview(rows)
    assert len(table["rows"]) == views_preview.TABLE_ROWS and table["more_rows"] == 7


# -- table or tree --------------------------------------------------------------------------------


def test_a_list_of_flat_objects_is_a_table_anything_else_a_tree():
    rows = [{"name": "a", "n": 1, "ok": True}, {"name": "b", "extra": None, "n": 2.5}]
    table = views_preview.structured_preview(rows)
    assert table["kind"] == "table" and table["columns"] == ["name", "n", "ok", "extra"]
    assert table["rows"] == [["a", "1", "true", ""], ["b", "2.5", "", ""]]
    markup = Markup(views_html.result_html(result({"content": [], "structuredContent": rows})))
    assert [t for t, _ in markup.tags if t in ("table", "details")] == ["table"]

    for value in ({"a": 1}, [{"a": {"nested": 1}}], [1, 2], [], "text", 3):
        assert views_preview.structured_preview(value)["kind"] == "tree"
    markup = Markup(views_html.result_html(result({"content": [], "structuredContent": {"a": [1, {"b": 2}]}})))
    assert "details" in [t for t, _ in markup.tags] and "table" not in [t for t, _ in markup.tags]


# -- stable text ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_text_forms_are_the_same_for_the_same_outcome_and_carry_no_ids_or_times():
    texts = []
    async with demo_client("--poll-interval", "100") as client:
        for _ in range(2):
            task = await client.start_task("slow_compute", {"seconds": 0.3, "steps": 3, "label": "sq"})
            res = await asyncio.wait_for(task, WAIT)
            texts.append(
                (
                    repr(task),
                    views_text.task_text(view_of(task)),
                    task._repr_mimebundle_()["text/plain"],
                    repr(res),
                    res._repr_mimebundle_()["text/plain"],
                    views_text.summary_line(view_of(task), timing=False),
                    summary_bundle(task)["text/plain"],
                )
            )
            for text in texts[-1]:
                assert task.task_id not in text
                assert not re.search(r"\d\d:\d\d|0x[0-9a-f]{6,}|\d+\.\d+ s\b", text), text
        await asyncio.sleep(0.05)
    assert texts[0] == texts[1]
    handle_text, _, _, result_text, _, summary, _ = texts[0]
    assert handle_text == "<TaskHandle slow_compute on demo: completed>"
    assert result_text == (
        "ToolResult(text='sq: done in 3 steps, value=14', structured={'label': 'sq', "
        "'seconds': 0.3, 'steps': 3, 'value': 14}, is_error=False)"
    )
    assert (
        summary == "slow_compute label=sq seconds=0.3 steps=3 on demo: completed — sq: done in 3 steps, value=14"
    )
    assert "completed in " in views_text.summary_line(view_of(task))  # the timed form is for HTML and printing


@pytest.mark.anyio
async def test_a_client_installs_the_views_as_its_handles_and_results_repr(monkeypatch: pytest.MonkeyPatch):
    for name in ("task_text", "task_html", "result_text", "result_html"):
        monkeypatch.setattr(renderers.RENDERERS, name, None)
    assert repr(result({"content": []})) == "ToolResult(is_error=False)"  # none installed: the plain stand-in
    async with demo_client() as client:
        task = await client.start_task("slow_compute", {"seconds": 0.1, "steps": 1, "label": "sq"})
        res = await asyncio.wait_for(task, WAIT)
    assert repr(task) == "<TaskHandle slow_compute on demo: completed>"
    assert task._repr_mimebundle_()["text/html"].startswith('<div class="mtj-task"')
    assert repr(res).startswith("ToolResult(text='sq: done in 1 steps") and "text/html" in res._repr_mimebundle_()


def test_control_characters_never_break_a_one_line_form():
    res = result({"content": [{"type": "text", "text": "a\nb\x1b[31mred"}], "structuredContent": {"k\n": "\x1b"}})
    assert "\n" not in repr(res) and "\x1b" not in repr(res)
    kinds = result(
        {"content": [{"type": "image", "mimeType": "image/png", "data": PNG}, {"type": "text", "text": "t"}]}
    )
    assert repr(kinds) == "ToolResult(text='t', content=[image/png, text], is_error=False)"
