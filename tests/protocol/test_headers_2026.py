"""SEP-2243 request headers: Mcp-Method, Mcp-Name, x-mcp-header parameters and their encoding."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.protocol import headers


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("us-west1", "us-west1"),
        ("", ""),
        ("us west 1", "us west 1"),
        ("test-method", "test-method"),
        ("SELECT * FROM users", "SELECT * FROM users"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
        ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_values_are_plain_or_base64(value, sent):
    assert headers.encode_value(value) == sent


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
        (42.0, "42"),
        (3.5, "3.5"),
        ("x", "x"),
        (None, None),
        ([1], None),
        ({"a": 1}, None),
    ],
)
def test_value_text(value, text):
    assert headers.value_text(value) == text


def _schema(**props):
    return {"type": "object", "properties": props}


def test_valid_declarations_and_the_headers_they_give():
    schema = _schema(
        region={"type": "string", "x-mcp-header": "Region"},
        priority={"type": "integer", "x-mcp-header": "Priority"},
        verbose={"type": "boolean", "x-mcp-header": "Verbose"},
        query={"type": "string"},
        config={"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        method_val={"type": "string", "x-mcp-header": "Method"},
    )
    spec = headers.param_headers(schema)
    assert spec == (
        (("region",), "Region"),
        (("priority",), "Priority"),
        (("verbose",), "Verbose"),
        (("config", "zone"), "Zone"),
        (("method_val",), "Method"),
    )
    sent = headers.argument_headers(
        spec,
        {
            "region": "Zürich",
            "priority": 42,
            "verbose": None,
            "query": "q",
            "config": {"zone": "b"},
            "method_val": "test-method",
        },
    )
    assert sent == {
        "Mcp-Param-Region": "=?base64?WsO8cmljaA==?=",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Zone": "b",
        "Mcp-Param-Method": "test-method",
    }
    assert headers.argument_headers(spec, {}) == {}
    assert headers.param_headers({"type": "object"}) == ()


@pytest.mark.parametrize(
    ("why", "schema"),
    [
        ("empty", _schema(a={"type": "string", "x-mcp-header": ""})),
        ("object", _schema(a={"type": "object", "x-mcp-header": "A"})),
        ("array", _schema(a={"type": "array", "x-mcp-header": "A"})),
        ("null", _schema(a={"type": "null", "x-mcp-header": "A"})),
        ("number", _schema(a={"type": "number", "x-mcp-header": "A"})),
        (
            "duplicate",
            _schema(
                a={"type": "string", "x-mcp-header": "MyField"}, b={"type": "string", "x-mcp-header": "myfield"}
            ),
        ),
        ("space", _schema(a={"type": "string", "x-mcp-header": "My Field"})),
        ("colon", _schema(a={"type": "string", "x-mcp-header": "My:Field"})),
        ("non-ascii", _schema(a={"type": "string", "x-mcp-header": "Régión"})),
        ("control", _schema(a={"type": "string", "x-mcp-header": "My\tField"})),
        ("under items", _schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "A"}})),
        ("under anyOf", {"type": "object", "anyOf": [_schema(a={"type": "string", "x-mcp-header": "A"})]}),
        ("under $defs", {"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "A"}}}),
        ("at the root", {"type": "string", "x-mcp-header": "A"}),
    ],
)
def test_invalid_declarations_are_refused(why, schema):
    with pytest.raises(ValueError):
        headers.param_headers(schema)


def test_a_property_named_like_the_annotation_is_not_one():
    schema = _schema(
        **{"x-mcp-header": {"type": "string"}, "d": {"type": "object", "default": {"x-mcp-header": 1}}}
    )
    assert headers.param_headers(schema) == ()


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("tools/call", {"name": "my-hyphenated-tool"}, "my-hyphenated-tool"),
        ("prompts/get", {"name": "p"}, "p"),
        ("resources/read", {"uri": "file:///a b"}, "file:///a b"),
        ("tasks/get", {"taskId": "t1"}, "t1"),
        ("tasks/update", {"taskId": "t1"}, "t1"),
        ("tasks/cancel", {"taskId": "t1"}, "t1"),
        ("tools/call", {"name": "café"}, "=?base64?Y2Fmw6k=?="),
        ("tools/list", {}, None),
        ("server/discover", None, None),
    ],
)
def test_standard_headers(method, params, name):
    sent = headers.standard_headers(method, params)
    assert sent["Mcp-Method"] == method and sent.get("Mcp-Name") == name
