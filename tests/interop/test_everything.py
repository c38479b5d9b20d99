"""Our client against @modelcontextprotocol/server-everything (TypeScript SDK, 2025-11-25 tasks).

The peer's task tool is `simulate-research-query {topic, ambiguous}`: taskSupport "required",
four one-second stages, pollInterval 1000 ms, ttl 300000 ms. With `ambiguous: true` (and a client
that declared elicitation) it goes `input_required` at the third stage and sends one
`elicitation/create` on the tasks/result stream, asking for `interpretation`, a string whose
choices are `oneOf: [{const, title}, ...]`; the report then names the chosen interpretation.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import mcp_tasks_jupyter as mtj
from tests.support import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.peers]

TOOL = "simulate-research-query"
STAGES = ("Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report")
TIMEOUT = 30  # seconds per test; the research itself takes about four


def first_option(prop: dict[str, Any]) -> Any:
    """The first choice a schema property offers: `enum[0]`, or the `const` of `oneOf[0]`/`anyOf[0]`."""
    if "enum" in prop:
        return prop["enum"][0]
    return (prop.get("oneOf") or prop["anyOf"])[0]["const"]


class Recorder:
    """An elicitation handler that answers with a fixed action and remembers what it was asked."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        if self.action != "accept":
            return {"action": self.action}
        properties = request["requestedSchema"]["properties"]
        return {"action": "accept", "content": {name: first_option(prop) for name, prop in properties.items()}}


async def test_tool_is_listed_as_task_required(everything: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(everything) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
    assert tools[TOOL].task_support == "required"
    assert set(tools[TOOL].input_schema["properties"]) == {"topic", "ambiguous"}


async def test_research_completes_with_a_report(everything: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(everything) as client:
            task = await client.start_task(TOOL, {"topic": "tides", "ambiguous": False})
            assert task.task_id
            assert not task.done()
            assert task.poll_interval_ms == 1000
            assert task.ttl_ms == 300000
            messages = set()
            while not task.done():  # the handle polls by itself; we only watch it
                messages.add(task.status_message)
                await anyio.sleep(0.1)
            result = await task
            assert task.done()
            assert task.status == "completed"
            assert not result.is_error
            assert "# Research Report: tides" in result.text
            assert messages & {f"{stage}..." for stage in STAGES}, messages

            again = client.attach(task.task_id)  # a second handle on the same (finished) task
            assert (await again).text == result.text


async def test_ambiguous_research_asks_and_uses_the_answer(everything: list[str] | str) -> None:
    handler = Recorder("accept")
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(everything, elicitation_handler=handler) as client:
            task = await client.start_task(TOOL, {"topic": "python", "ambiguous": True})
            result = await task
    assert len(handler.requests) == 1
    interpretation = handler.requests[0]["requestedSchema"]["properties"]["interpretation"]
    chosen = first_option(interpretation)
    assert chosen == "programming"
    assert f"# Research Report: python ({chosen})" in result.text
    assert f"**Clarification**: {chosen}" in result.text


async def test_declined_elicitation_falls_back_to_the_default(everything: list[str] | str) -> None:
    handler = Recorder("decline")
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(everything, elicitation_handler=handler) as client:
            result = await (await client.start_task(TOOL, {"topic": "python", "ambiguous": True}))
    assert len(handler.requests) == 1
    assert "User declined - using default interpretation" in result.text


async def test_cancelling_a_running_task(everything: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(everything) as client:
            task = await client.start_task(TOOL, {"topic": "glaciers", "ambiguous": False})
            await eventually(lambda: task.status == "working", what="status working")

            listed = {t.task_id: t.status for t in await client.list_tasks()}
            assert listed.get(task.task_id) == "working"

            await task.cancel()
            with pytest.raises(mtj.TaskCancelled):
                await task
            assert task.status == "cancelled"
            assert task.done()

            listed = {t.task_id: t.status for t in await client.list_tasks()}
            assert listed.get(task.task_id) == "cancelled"


async def test_ambiguous_research_answered_in_advance(everything: list[str] | str) -> None:
    """`answers=` settles the question without any handler: the report uses the given reading."""
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(everything) as client:
            task = await client.start_task(
                TOOL, {"topic": "python", "ambiguous": True}, answers={"interpretation": "snake"}
            )
            result = await task
    assert "# Research Report: python (snake)" in result.text
    assert [source for _message, source, _action in task.answered] == ["answers"]
