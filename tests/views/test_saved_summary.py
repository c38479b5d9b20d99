"""A task's saved summary (issue 30, item 4): what a notebook keeps beside the live widget, for places
without a kernel. It names the task by its arguments as the live views do, is one line where the live
view was (``show_task(compact=True)``), keeps the questions asked and the answers given, escapes what
came from the server or the user, and its text stays free of ids and times (nbval compares it)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp_tasks_jupyter.errors import TaskCancelled
from mcp_tasks_jupyter.jupyter.display import summary_bundle
from mcp_tasks_jupyter.tasks.control import control_of
from mcp_tasks_jupyter.tasks.handle import HandleControls, TaskHandle
from mcp_tasks_jupyter.tasks.results import ToolResult

pytestmark = [pytest.mark.unit, pytest.mark.anyio]


async def _no_op(_handle: TaskHandle) -> None:
    return None


def handle(arguments: dict[str, Any], *, tool: str = "slow_compute") -> TaskHandle:
    """A handle made in the test's event loop (its future belongs to the loop)."""
    controls = HandleControls(_no_op, lambda: False)
    made = TaskHandle("demo", tool, arguments, runs_as_task=True, progress_token="p", controls=controls)
    control_of(made).named("task-id-123")
    return made


def cancelled(label: str) -> TaskHandle:
    made = handle({"seconds": 40, "steps": 20, "label": label})
    control_of(made).settle(error=TaskCancelled("Cancelled by request", server="demo", task_id="task-id-123"))
    return made


def completed(arguments: dict[str, Any], text: str) -> TaskHandle:
    made = handle(arguments)
    control_of(made).settle(ToolResult.from_wire({"content": [{"type": "text", "text": text}]}))
    return made


def visible(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.mark.parametrize("compact", [False, True])
async def test_cancelled_tasks_of_one_tool_are_told_apart_by_their_arguments(compact: bool) -> None:
    bundles = [summary_bundle(cancelled(f"t{i}"), compact=compact) for i in range(5)]
    assert len({b["text/plain"] for b in bundles}) == len({b["text/html"] for b in bundles}) == 5
    first = bundles[0]
    assert first["text/plain"] == (
        "slow_compute label=t0 seconds=40 steps=20 on demo: cancelled — Cancelled by request"
    )
    assert "slow_compute label=t0 seconds=40 steps=20" in visible(first["text/html"])
    assert "task-id-123" not in first["text/plain"]


async def test_a_compact_summary_is_one_line_as_the_live_view_was() -> None:
    done = completed({"seconds": 1, "label": "t7"}, "t7: done in 5 steps, value=55\nmore lines")
    full, one = summary_bundle(done), summary_bundle(done, compact=True)
    assert full["text/html"].startswith('<div class="mtj-summary"') and "<pre" in full["text/html"]
    html = one["text/html"]
    assert html.startswith('<div class="mtj-compact-summary"')
    assert "<pre" not in html and "more lines" not in html  # the outcome's first line only
    assert "completed slow_compute label=t7 seconds=1 t7: done in 5 steps, value=55" in visible(html)
    assert one["text/plain"] == full["text/plain"]  # the text was one line already
    running = handle({"label": "r1"})
    first = summary_bundle(running, compact=True)
    assert first["text/html"].startswith('<div class="mtj-compact-summary"')
    assert first["text/plain"] == "slow_compute label=r1 on demo: running…"


@pytest.mark.parametrize("compact", [False, True])
async def test_the_questions_asked_and_the_answers_given_are_kept(compact: bool) -> None:
    made = handle({"topic": "tides"}, tool="research")
    control_of(made).question_answered("Which depth?", "answers", "accept", {"depth": 2, "api_token": "abc123"})
    control_of(made).question_answered("Go on with <b>tides</b>?", "person", "decline")
    control_of(made).question_answered("Pick one", "person", "accept", {"choice": "<img src=x onerror=alert(1)>"})
    control_of(made).settle(
        ToolResult.from_wire({"content": [{"type": "text", "text": "Research report: tides"}]})
    )
    bundle = summary_bundle(made, compact=compact)
    assert bundle["text/plain"].splitlines() == [
        "research topic=tides on demo: completed — Research report: tides",
        "  asked: Which depth? → depth=2 api_token=<redacted> (preset answers)",
        "  asked: Go on with <b>tides</b>? → declined (in the form)",
        '  asked: Pick one → choice="<img src=x onerror=alert(1)>" (in the form)',
    ]
    html = bundle["text/html"]
    shown = visible(html)
    assert "Which depth? → depth=2 api_token=&lt;redacted&gt; (preset answers)" in shown
    assert "Go on with &lt;b&gt;tides&lt;/b&gt;? → declined (in the form)" in shown
    assert "<img" not in html and "<b>tides" not in html and "abc123" not in html


async def test_arguments_from_the_user_are_escaped_in_every_form() -> None:
    made = completed({"label": "<script>alert(1)</script>", "q": 'a"b'}, "ok")
    for compact in (False, True):
        html = summary_bundle(made, compact=compact)["text/html"]
        assert "<script>" not in html and "&lt;script&gt;" in html
    assert summary_bundle(handle({"label": "<i>x</i>"}))["text/html"].count("<i>") == 0
