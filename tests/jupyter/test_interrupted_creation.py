"""A cell interrupted while its ``%mcp_task`` is still creating the task (``pending.settle``): the cell
ends with one line saying so, not a ``CancelledError`` traceback, and the creation goes on; the
variable is bound once the job has the handle (``Pending.when_started``)."""

from __future__ import annotations

import asyncio

import pytest

from mcp_tasks_jupyter.jupyter.interrupts import StillStarting
from mcp_tasks_jupyter.jupyter.pending import Pending, settle

pytestmark = pytest.mark.anyio
WAIT = 10  # seconds: a bound on every wait


async def test_an_interrupt_during_the_creation_says_still_being_started_and_the_creation_goes_on():
    creation: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    pending = Pending("demo:slow_compute", creation, starts_task="demo:slow_compute label=held seconds=0.5")
    cell = asyncio.ensure_future(settle(pending, target=None))
    await asyncio.sleep(0)  # the cell awaits the creation
    cell.cancel()  # what an interrupt does to an awaiting cell
    with pytest.raises(StillStarting) as said:
        await asyncio.wait_for(cell, WAIT)
    assert str(said.value) == (
        "still being started in the background: demo:slow_compute label=held seconds=0.5; "
        "`%mcp_tasks` lists it then"
    )
    assert not creation.cancelled()  # the creation is not the cell's to cancel
    bound: list[object] = []
    pending.when_started(bound.append)
    creation.set_result("the handle")
    await asyncio.sleep(0)
    assert bound == ["the handle"]


async def test_an_interrupt_of_another_awaiting_magic_keeps_its_cancellation():
    job: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    cell = asyncio.ensure_future(settle(Pending("%mcp_connect demo", job), target=None))
    await asyncio.sleep(0)
    cell.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(cell, WAIT)
