"""A call the server decides about (ext), whose connection breaks before any answer came: the server may
have started the work or not, and the client, holding no task id, can neither ask it nor send the call
again without risking the work twice. The task ends ``lost`` and its message says what to do. The demo
over HTTP in the ext dialect, behind the fault proxy going dark while the call is held."""

from __future__ import annotations

import asyncio

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.running import lifecycle
from tests.support import start_demo_http
from tests.support.fault_proxy import FaultProxy, FaultRates

pytestmark = [pytest.mark.anyio, pytest.mark.servers]
WAIT = 20  # seconds: a bound on every wait, never a speed claim
NO_FAULTS = FaultRates(reset=0, reset_after=0, bad_gateway=0, unavailable=0, delay=0, cut_stream=0, lost_session=0)


async def test_a_call_cut_before_the_server_answered_ends_lost_and_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lifecycle, "ACCEPT_WAIT_S", 0.2)  # the cell gets its handle sooner; the rest is as is
    with start_demo_http("--dialect", "ext") as upstream:
        proxy = FaultProxy(upstream, seed=1, rates=NO_FAULTS)
        url = await proxy.start()
        try:
            async with mtj.connect(url, dialect="ext") as client:
                await client.list_tools()  # known before the dark: only the call is held
                proxy.go_dark()
                handle = await client.start_task("slow_compute", {"seconds": 0.1, "label": "cut"})
                assert handle.task_id is None and not handle.done()  # held: the server has said nothing yet
                proxy.light_up()  # the held call is cut
                with pytest.raises(mtj.TaskLost) as lost:
                    await asyncio.wait_for(handle, WAIT)
        finally:
            await proxy.stop()
    said = str(lost.value)
    assert "the connection broke before the server answered the call" in said
    assert "It may or may not have started the work" in said and "could run the work twice" in said
    assert handle.status == "lost" and proxy.forwarded["tools/call"] == 0
