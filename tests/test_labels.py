"""A task named by its arguments (``labels.py``): short, in order, secrets never shown."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter import redact
from mcp_tasks_jupyter.views.labels import LABEL_CHARS, arguments_label, task_label

pytestmark = pytest.mark.unit


def test_a_label_is_the_arguments_in_order_each_value_short():
    assert arguments_label({"topic": "tides", "depth": 2, "fast": True}) == "topic=tides depth=2 fast=true"
    assert arguments_label({"topic": "two words", "values": [1, 2]}) == 'topic="two words" values=[1,2]'
    assert arguments_label({"text": "x" * 100}) == "text=" + "x" * 23 + "…"
    assert arguments_label(None) == arguments_label({}) == ""
    long = arguments_label({f"k{i}": i for i in range(40)})
    assert len(long) == LABEL_CHARS and long.endswith("…")
    assert task_label("research", {"topic": "tides"}) == "research topic=tides"
    assert task_label(None, None) == "?"


def test_a_label_never_shows_a_secret():
    assert arguments_label({"api_token": "abc123", "q": "x"}) == "api_token=<redacted> q=x"
    redact.register("s3cr3t-value")
    assert "s3cr3t-value" not in arguments_label({"q": "s3cr3t-value"})
