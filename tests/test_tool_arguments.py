"""Argument names against a tool's input schema (``tool_arguments.py``)."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.tasks.tool_arguments import (
    argument_names,
    takes_other_names,
    unknown_names,
    unknown_names_text,
)

pytestmark = pytest.mark.unit

SCHEMA = {"type": "object", "properties": {"seconds": {}, "steps": {}, "label": {}}}


def test_unknown_names_come_with_the_closest_known_ones():
    assert argument_names(SCHEMA) == ["seconds", "steps", "label"]
    assert unknown_names(SCHEMA, {"secs": 1, "label": "x", "zzz": 2}) == {"secs": ["seconds", "steps"], "zzz": []}
    assert unknown_names_text("slow", SCHEMA, {"secs": ["seconds"], "zzz": []}) == (
        "tool 'slow' has no arguments 'secs' (did you mean 'seconds'?), 'zzz'; "
        "its arguments: seconds, steps, label"
    )
    assert unknown_names({"type": "object"}, {"anything": 1}) == {}  # a schema naming nothing


@pytest.mark.parametrize(
    ("extra", "takes"),
    [
        ({}, False),
        ({"additionalProperties": False}, False),
        ({"additionalProperties": True}, True),
        ({"additionalProperties": {"type": "string"}}, True),
        ({"patternProperties": {"^x-": {}}}, True),
    ],
)
def test_whether_a_schema_takes_other_names(extra, takes):
    assert takes_other_names({**SCHEMA, **extra}) is takes
    assert takes_other_names({"type": "object"}) is True
