"""Item 4 of the fault suite, the poller's part: a poll answered with garbage is a transient failure.

A proxy's login page (``text/html``), a body that is not JSON, a task object with nonsense in it: retried
with backoff, then ``lost`` with the reason; never an immediate failure of the task.
"""

import asyncio
import itertools

import pytest

import mcp_tasks_jupyter as mtj

from .server import Raw, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

GARBAGE = {
    "html": lambda m: Raw(200, b"<html><body>Please log in</body></html>", "text/html"),
    "not json": lambda m: Raw(200, b"{this is not json", "application/json"),
    "bad task": lambda m: {"taskId": m["params"]["taskId"], "status": "working", "pollInterval": "soon"},
}


@pytest.mark.parametrize("kind", list(GARBAGE))
@pytest.mark.usefixtures("short_backoff")
async def test_garbage_twice_then_good_answers_the_task_completes(kind):
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        answers = itertools.count()
        garbage = GARBAGE[kind]
        server.brain.script["tasks/get"] = lambda m: garbage(m) if next(answers) < 2 else None
        await asyncio.sleep(0.5)
        server.brain.finish(handle.task_id)
        assert (await asyncio.wait_for(handle, 20)).text == "done"
        assert next(answers) >= 3  # two garbage answers, then a good one


@pytest.mark.usefixtures("short_backoff")
async def test_garbage_for_good_ends_the_task_lost_with_the_reason():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        client.max_poll_failures = 2
        handle = await client.start_task("job")
        server.brain.script["tasks/get"] = GARBAGE["html"]
        with pytest.raises(mtj.TaskLost, match=r"lost contact with the server: .*text/html"):
            await asyncio.wait_for(handle, 20)
        assert handle.status == "lost"
