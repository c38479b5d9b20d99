"""The scripted fault server itself behaves when told to: a task runs to its end over both transports."""

import pytest

import mcp_tasks_jupyter as mtj

from .conftest import stdio_argv
from .server import http_fault_server

pytestmark = pytest.mark.anyio


async def test_a_task_over_http():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job", {"seconds": 0.2})
        assert (await handle).text == "done"
        assert server.brain.requests("tasks/get") or server.brain.requests("tasks/result")


async def test_a_task_over_stdio():
    async with mtj.connect(stdio_argv("plain")) as client:
        handle = await client.start_task("job", {"seconds": 0.2})
        assert (await handle).text == "done"
