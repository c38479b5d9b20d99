"""Item 5 of the fault suite: questions that no longer belong to anything are refused, never shown or answered.

Server requests arrive on the standalone GET stream of the scripted HTTP server, tagged with the task they
belong to (``_meta["io.modelcontextprotocol/related-task"]``), as 2025-11-25 servers tag them.
"""

import asyncio

import pytest

import mcp_tasks_jupyter as mtj

from .server import http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


async def until(predicate, timeout: float = 10.0, step: float = 0.02) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(step)


class Person:
    """An elicitation handler that records each question and answers after ``delay``."""

    def __init__(self, delay: float = 0.0) -> None:
        self.asked: list[dict] = []
        self.delay = delay

    async def __call__(self, params: dict) -> dict:
        self.asked.append(params)
        await asyncio.sleep(self.delay)
        return {"action": "accept", "content": {"choice": "yes"}}


async def answer(server, request_id, timeout: float = 10.0) -> dict:
    await until(lambda: request_id in server.brain.answers, timeout)
    return server.brain.answers[request_id]


async def test_a_question_naming_an_ended_task_is_refused_unseen():
    person = Person()
    async with http_fault_server() as server, mtj.connect(server.url, elicitation_handler=person) as client:
        handle = await client.start_task("job", {"seconds": 0.1})
        await asyncio.wait_for(handle, 10)
        request_id = server.brain.ask(handle.task_id, "Still there?")
        reply = await answer(server, request_id)
        assert reply["error"]["code"] == -32602
        assert f"task {handle.task_id!r} has already ended (completed)" in reply["error"]["message"]
        assert person.asked == [] and handle.answered == []


async def test_a_question_naming_a_task_this_client_does_not_know_is_refused_unseen():
    person = Person()
    async with http_fault_server() as server, mtj.connect(server.url, elicitation_handler=person) as client:
        await client.list_tools()
        request_id = server.brain.ask("someone-elses-task")
        reply = await answer(server, request_id)
        assert "knows no task 'someone-elses-task'" in reply["error"]["message"]
        assert person.asked == []
        untagged = server.brain.ask(None, "A question of the server's own")
        assert (await answer(server, untagged))["result"]["action"] == "accept"  # untagged ones are still asked
        assert len(person.asked) == 1


async def test_a_question_still_open_when_its_task_ends_is_answered_with_an_error_not_a_stale_accept():
    person = Person(delay=3600)
    async with http_fault_server() as server, mtj.connect(server.url, elicitation_handler=person) as client:
        handle = await client.start_task("ask")
        await until(lambda: person.asked)
        request_id = server.brain.asked[0]
        server.brain.finish(handle.task_id)
        await asyncio.wait_for(handle, 10)
        reply = await answer(server, request_id)
        assert "has already ended (completed)" in reply["error"]["message"]
        assert "result" not in reply


async def test_a_repeated_request_id_is_answered_once():
    person = Person(delay=0.3)
    async with http_fault_server() as server, mtj.connect(server.url, elicitation_handler=person) as client:
        await client.list_tools()
        server.brain.ask(None, "First", request_id=77)
        server.brain.ask(None, "The same id while the first is open", request_id=77)
        await answer(server, 77)
        server.brain.ask(None, "The same id once answered", request_id=77)
        # a later question on the same stream: once it is asked, the repeated id before it was handled
        await answer(server, server.brain.ask(None, "Later", request_id=78))
        assert [p["message"] for p in person.asked] == ["First", "Later"]
        assert sum(1 for m in server.brain.received if m.get("id") == 77 and "method" not in m) == 1
