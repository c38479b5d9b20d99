import pytest

from mcp_tasks_jupyter.protocol import tasks_2025
from mcp_tasks_jupyter.protocol.task_state import TaskState, parse_task
from mcp_tasks_jupyter.protocol.types import (
    EmbeddedResource,
    ImageContent,
    InitializeResult,
    ResourceLink,
    TextContent,
    Tool,
    UnknownContent,
    parse,
    parse_content,
)
from mcp_tasks_jupyter.tasks.results import ToolResult


def test_every_content_block_kind_is_validated():
    blocks = parse_content(
        [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
            {"type": "hologram", "frames": 3},
        ]
    )
    assert [b.type for b in blocks] == ["text", "image", "audio", "resource", "resource_link", "hologram"]
    assert isinstance(blocks[1], ImageContent) and blocks[1].mime_type == "image/png"
    assert isinstance(blocks[3], EmbeddedResource) and blocks[3].resource.text == "x"
    assert isinstance(blocks[4], ResourceLink)
    assert isinstance(blocks[5], UnknownContent) and blocks[5].model_extra == {"frames": 3}


@pytest.mark.parametrize(
    "blocks, reason",
    [
        ("text", "must be an array"),
        ([{"text": "no type"}], r"content\[0\] must be an object with a 'type'"),
        ([{"type": "image", "data": "x"}], "mimeType"),
        ([{"type": "text"}], "text"),
    ],
)
def test_bad_content_is_refused_with_the_place(blocks, reason):
    with pytest.raises(ValueError, match=reason):
        parse_content(blocks)


def test_tool_result_text_structured_and_error_flag():
    raw = {
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "structuredContent": {"n": 1},
        "isError": True,
        "_meta": {"k": 1},
    }
    result = ToolResult.from_wire(raw)
    assert result.text == "a\nb" and result.structured == {"n": 1} and result.is_error
    assert result.raw == raw and result.meta == {"k": 1}  # an equal copy, kept as compact JSON
    assert isinstance(result.content[0], TextContent)
    with pytest.raises(ValueError, match="isError"):
        ToolResult.from_wire({"content": [], "isError": "yes"})


def test_tool_task_support_and_schema_kept_verbatim():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/x"}},
        "$defs": {"x": {"type": "string"}},
        "required": ["a"],
    }
    tool = Tool.model_validate({"name": "t", "inputSchema": schema, "execution": {"taskSupport": "required"}})
    assert tool.input_schema == schema and tool.task_support == "required"
    assert tool.required_arguments == ["a"]
    assert Tool.model_validate({"name": "u", "inputSchema": {}}).task_support == "forbidden"
    assert Tool.model_validate({"name": "v", "execution": {"taskSupport": "bogus"}}).task_support == "forbidden"


def test_parse_names_what_was_invalid():
    with pytest.raises(ValueError, match="invalid initialize result: serverInfo: Field required"):
        parse(InitializeResult, {"protocolVersion": "2025-11-25"}, "initialize result")


def test_task_parsing_normalises_and_validates():
    state = parse_task(
        {
            "taskId": "t1",
            "status": "working",
            "ttl": 60000,
            "pollInterval": 500,
            "createdAt": "2025-11-25T10:00:00Z",
            "lastUpdatedAt": "2025-11-25T10:00:01Z",
        }
    )
    assert state == TaskState("t1", "working", None, "2025-11-25T10:00:00Z", "2025-11-25T10:00:01Z", 60000, 500)
    assert parse_task({"taskId": "t", "status": "completed", "ttl": None}).ttl_ms is None
    assert parse_task({"taskId": "t", "status": "failed"}).terminal
    for bad, reason in [
        ({"status": "working"}, "taskId"),
        ({"taskId": "t", "status": "sleeping"}, "unknown status"),
        ({"taskId": "t", "status": "working", "ttl": -1}, "ttl"),
        ({"taskId": "t", "status": "working", "pollInterval": "5"}, "pollInterval"),
        ({"taskId": "t", "status": "working", "statusMessage": 5}, "statusMessage"),
    ]:
        with pytest.raises(ValueError, match=reason):
            parse_task(bad)


def test_2025_capabilities_and_codecs():
    caps = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    assert tasks_2025.server_supports_task_calls(caps)
    assert not tasks_2025.server_supports_task_calls({"tasks": {"list": {}}})
    assert not tasks_2025.server_supports_task_calls({})
    assert tasks_2025.server_supports(caps, "cancel") and not tasks_2025.server_supports({}, "list")
    params = tasks_2025.call_params("t", {"a": 1}, 5000, "tok")
    assert params == {"name": "t", "arguments": {"a": 1}, "task": {"ttl": 5000}, "_meta": {"progressToken": "tok"}}
    assert tasks_2025.call_params("t", {}, None, None)["task"] == {}
    with pytest.raises(ValueError, match="no 'task'"):
        tasks_2025.parse_create_result({"content": []})
    tasks, cursor = tasks_2025.parse_list_result(
        {"tasks": [{"taskId": "a", "status": "working"}], "nextCursor": "c"}
    )
    assert [t.task_id for t in tasks] == ["a"] and cursor == "c"
    assert tasks_2025.related_task_id({"_meta": {tasks_2025.RELATED_TASK: {"taskId": "z"}}}) == "z"
    assert tasks_2025.related_task_id({"_meta": {}}) is None


def test_task_support_none_only_when_the_dialect_says_the_server_decides():
    tool = Tool.model_validate({"name": "u", "inputSchema": {}, "_decided_per_call": True, "decided_per_call": 1})
    assert tool.task_support == "forbidden"  # nothing a server sends marks it
    tool.decided_per_call()
    assert tool.task_support is None
    hinted = Tool.model_validate({"name": "v", "execution": {"taskSupport": "optional"}})
    hinted.decided_per_call()
    assert hinted.task_support == "optional"
