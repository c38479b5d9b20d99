"""Attaching to a task from a second connection, as a restarted kernel would."""

import asyncio

import pytest

import mcp_tasks_jupyter as mtj
from tests.support import start_demo_http

pytestmark = pytest.mark.anyio


async def test_second_client_attaches_and_gets_the_result():
    with start_demo_http() as url:
        async with mtj.connect(url) as first:
            task = await first.start_task("slow_compute", {"seconds": 1.0, "steps": 3, "label": "kept"})
            task_id = task.task_id
        # the first connection is closed; the task goes on at the server
        async with mtj.connect(url) as second:
            handle = second.attach(task_id)
            assert second.attach(task_id) is handle
            result = await asyncio.wait_for(handle, 20)
            assert result.structured["label"] == "kept" and handle.status == "completed"
