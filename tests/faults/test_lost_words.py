"""A task the server forgot says so in plain words (issue 30 item 5): after a server restart that lost
it, the handle (so the widget, the side panel and the record) reads "the server no longer knows this
task", not the task's last headline ("step 23/30") beside the server's raw "Task not found"."""

import asyncio
import logging

import pytest

import mcp_tasks_jupyter as mtj

from .server import http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]
GUARD_S = 20.0  # a hang guard, not a speed claim


async def test_a_task_the_server_forgot_reads_as_forgotten_not_as_its_last_headline(caplog):
    caplog.set_level(logging.INFO, logger="mcp_tasks_jupyter")
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job", {})
        [task] = server.brain.tasks.values()
        task.status_message = "step 23/30: integrating"
        await asyncio.wait_for(_until(lambda: handle.status_message == "step 23/30: integrating"), GUARD_S)
        await server.restart(keep_tasks=False)
        with pytest.raises(mtj.TaskNotFound):
            await handle.wait(GUARD_S)
        assert handle.status == "lost"
        assert handle.status_message.startswith("the server no longer knows this task ("), handle.status_message
        assert "step 23/30" not in handle.status_message
    # good news is no warning: a warning is a red box in whatever cell runs
    assert not [r for r in caplog.records if "reachable again" in r.getMessage() and r.levelno >= logging.WARNING]


async def _until(done) -> None:
    while not done():
        await asyncio.sleep(0.02)
