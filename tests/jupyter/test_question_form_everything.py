"""Issue 4's done-when against a server no one here wrote: the everything server's ambiguous research,
answered through the widget's form (as the browser would) and through answers given in advance."""

from __future__ import annotations

import asyncio

import pytest

from mcp_tasks_jupyter.jupyter.questions import QuestionRouter
from mcp_tasks_jupyter.jupyter.runtime import Runtime
from tests.support import everything_stdio_argv

from .conftest import WAIT
from .test_question_form import answer, open_form, shown_widget

pytestmark = [pytest.mark.anyio, pytest.mark.peers]
TOOL = "simulate-research-query"


async def test_everything_research_answered_through_the_form() -> None:
    runtime = Runtime()
    runtime.question_handler = QuestionRouter(display=[].append)
    try:
        await runtime.connect("everything", everything_stdio_argv())
        task = await runtime.start_task("everything", TOOL, {"topic": "python", "ambiguous": True})
        widget = shown_widget(task)
        form = await open_form(widget)
        field = next(f for f in form["fields"] if f["name"] == "interpretation")
        assert [value for value, _label in field["options"]] == ["programming", "snake", "comedy"]
        answer(widget, content={"interpretation": "comedy"})
        result = await asyncio.wait_for(task, WAIT * 2)
        assert "# Research Report: python (comedy)" in result.text
        assert [source for _q, source, _a in task.answered] == ["person"]
    finally:
        await runtime.aclose()


async def test_everything_research_answered_in_advance_skips_the_form() -> None:
    runtime = Runtime()
    shown: list = []
    runtime.question_handler = QuestionRouter(display=shown.append)
    try:
        await runtime.connect("everything", everything_stdio_argv())
        task = await runtime.start_task(
            "everything", TOOL, {"topic": "python", "ambiguous": True}, answers={"interpretation": "snake"}
        )
        result = await asyncio.wait_for(task, WAIT * 2)
        assert "# Research Report: python (snake)" in result.text
        assert [source for _q, source, _a in task.answered] == ["answers"] and not shown
    finally:
        await runtime.aclose()
