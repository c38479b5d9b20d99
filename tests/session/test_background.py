"""Item 8 of the fault suite: fire-and-forget work is owned until it ends, and its failures are logged."""

import asyncio
import gc
import logging

import pytest

from mcp_tasks_jupyter.session.background import Background
from mcp_tasks_jupyter.session.session import Session
from mcp_tasks_jupyter.transport import StreamableHTTPTransport

pytestmark = pytest.mark.anyio


async def _waits_on_its_own_future(seen: list[str]) -> None:
    await asyncio.get_running_loop().create_future()  # only this coroutine references the future
    seen.append("never")


async def test_a_spawned_task_survives_garbage_collection_until_it_ends():
    session = Session(StreamableHTTPTransport("http://127.0.0.1:9/mcp"))
    seen: list[str] = []
    session.spawn(_waits_on_its_own_future(seen))
    await asyncio.sleep(0)
    gc.collect()
    names = [t.get_coro().__qualname__ for t in asyncio.all_tasks()]
    assert "_waits_on_its_own_future" in names  # a weakly held task would be gone now
    await session.background.aclose()
    assert len(session.background) == 0


async def test_a_failing_background_task_is_logged(caplog):
    async def fails() -> None:
        raise ValueError("the disk is full")

    background = Background("owner-x")
    with caplog.at_level(logging.WARNING, logger="mcp_tasks_jupyter.session.background"):
        background.spawn(fails(), name="job-y")
        await asyncio.sleep(0.01)
    assert "owner-x: background task job-y failed: ValueError: the disk is full" in caplog.text
