"""MCP Apps as data (protocol/apps.py): a tool's view and visibility, a view resource read and checked."""

from __future__ import annotations

import base64

import pytest

from mcp_tasks_jupyter.protocol import apps
from mcp_tasks_jupyter.protocol.types import Tool


def tool(meta):
    return Tool.model_validate({"name": "t", "inputSchema": {}, "_meta": meta})


def test_a_tool_names_its_view_in_meta_ui():
    ui = tool({"ui": {"resourceUri": "ui://s/view.html"}}).ui
    assert ui is not None and ui.resource_uri == "ui://s/view.html"
    assert ui.visibility == ("model", "app") and not ui.app_only and ui.app_callable


def test_the_deprecated_flat_key_still_names_the_view():
    ui = tool({"ui/resourceUri": "ui://s/old.html"}).ui
    assert ui is not None and ui.resource_uri == "ui://s/old.html"


def test_a_tool_without_apps_meta_has_no_ui():
    assert tool(None).ui is None and tool({"other": 1}).ui is None


def test_visibility_marks_app_only_and_model_only_tools():
    app_only = tool({"ui": {"resourceUri": "ui://s/v", "visibility": ["app"]}}).ui
    assert app_only is not None and app_only.app_only and app_only.app_callable
    model_only = tool({"ui": {"visibility": ["model", "bogus"]}}).ui
    assert model_only is not None and not model_only.app_only and not model_only.app_callable
    assert model_only.resource_uri is None


@pytest.mark.parametrize("uri", ["https://x/view", "ui://", 42, "ui://" + "a" * 3000, "ui://a\nb"])
def test_a_uri_that_is_no_ui_uri_is_dropped(uri):
    ui = tool({"ui": {"resourceUri": uri}}).ui
    assert ui is not None and ui.resource_uri is None


def html_content(text=None, blob=None, meta=None, mime=apps.MIME_TYPE, uri="ui://s/v"):
    item = {"uri": uri, "mimeType": mime}
    if text is not None:
        item["text"] = text
    if blob is not None:
        item["blob"] = blob
    if meta is not None:
        item["_meta"] = meta
    return {"contents": [item]}


def test_a_view_is_read_from_text_or_blob():
    assert apps.read_app_resource(html_content("<p>hi</p>"), "ui://s/v").html == "<p>hi</p>"
    blob = base64.b64encode("<p>é</p>".encode()).decode()
    assert apps.read_app_resource(html_content(blob=blob), "ui://s/v").html == "<p>é</p>"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ({"contents": []}, "no contents"),
        (html_content("<p>", mime="text/html"), "mimeType"),
        (html_content(), "neither text nor blob"),
        (html_content(blob="!!!not base64"), "base64"),
        (html_content("x" * (apps.MAX_HTML_BYTES + 1)), "larger than"),
        (html_content("é" * (apps.MAX_HTML_BYTES // 2 + 1)), "larger than"),
    ],
)
def test_a_bad_or_oversized_view_is_refused(raw, why):
    with pytest.raises(ValueError, match=why):
        apps.read_app_resource(raw, "ui://s/v")


def test_the_contents_own_meta_ui_comes_first_then_the_listing():
    own = {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}}
    listed = {"ui": {"csp": {"connectDomains": ["https://listed.example.com"]}, "prefersBorder": True}}
    first = apps.read_app_resource(html_content("<p>", meta=own), "ui://s/v", listed)
    assert first.ui.csp == {"connectDomains": ["https://api.example.com"]}
    second = apps.read_app_resource(html_content("<p>"), "ui://s/v", listed)
    assert second.ui.csp == {"connectDomains": ["https://listed.example.com"]} and second.ui.prefers_border


@pytest.mark.parametrize(
    "bad",
    [
        "https://a.com; script-src *",
        "'unsafe-eval'",
        "*",
        "https://*",
        "https://a.com/path",
        "javascript:alert(1)",
        "data:",
        "https://a.com:99999",
        "https://a .com",
        "https://a.com'",
        42,
    ],
)
def test_a_csp_domain_that_is_no_plain_origin_is_dropped(bad):
    ui = apps.resource_ui({"ui": {"csp": {"resourceDomains": [bad, "https://*.cdn.example.com:8443"]}}})
    assert ui is not None
    assert ui.csp["resourceDomains"] == ["https://*.cdn.example.com:8443"]
    assert len(ui.dropped) == 1 and "resourceDomains" in ui.dropped[0]


def test_csp_lists_and_permissions_are_bounded_and_known():
    many = [f"https://h{i}.example.com" for i in range(100)]
    ui = apps.resource_ui(
        {"ui": {"csp": {"connectDomains": many, "frameDomains": "x"}, "permissions": {"camera": {}, "root": {}}}}
    )
    assert ui is not None
    assert len(ui.csp["connectDomains"]) == apps.MAX_DOMAINS and "frameDomains" not in ui.csp
    assert ui.permissions == ("camera",)
