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


def test_a_label_names_the_call_first_so_a_cut_keeps_what_differs():
    # Thirty calls of one tool differ by their label=: it leads, the rest keep their given order.
    arguments = {"seconds": 40, "steps": 20, "label": "t17"}
    assert arguments_label(arguments) == "label=t17 seconds=40 steps=20"
    assert task_label("slow_compute", arguments) == "slow_compute label=t17 seconds=40 steps=20"
    assert arguments_label({"b": 1, "name": "x", "a": 2}) == "name=x b=1 a=2"
    cut = arguments_label({"text": "y" * 20, "more": "z" * 20, "also": "w" * 20, "label": "t29"})
    assert cut.startswith("label=t29 ") and cut.endswith("…")


def test_a_label_never_shows_a_secret():
    assert arguments_label({"api_token": "abc123", "q": "x"}) == "api_token=<redacted> q=x"
    redact.register("s3cr3t-value")
    assert "s3cr3t-value" not in arguments_label({"q": "s3cr3t-value"})


def test_a_handles_label_is_made_once_and_again_when_a_secret_is_registered():
    import asyncio

    from mcp_tasks_jupyter.tasks.handle import HandleControls, TaskHandle
    from mcp_tasks_jupyter.views import view

    async def no_op(_handle: TaskHandle) -> None:
        return None

    async def make() -> TaskHandle:
        controls = HandleControls(no_op, lambda: False)
        return TaskHandle(
            "demo", "tool", {"q": "later-s3cret"}, runs_as_task=True, progress_token="t", controls=controls
        )

    handle = asyncio.run(make())
    first = view.view_of(handle).label
    assert first == "q=later-s3cret" and view._labels[handle][2] is first
    assert view.view_of(handle).label is first  # made once, read again
    redact.register("later-s3cret")  # a secret registered after the label was made
    assert "later-s3cret" not in view.view_of(handle).label
