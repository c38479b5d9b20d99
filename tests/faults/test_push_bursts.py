"""A burst of server messages read from the GET stream at once (a thousand tasks' notifications in one
chunk) is handled a slice at a time: the event loop runs between slices, so a cell waits for one slice,
not for the whole burst (issue 24). Loop passes are counted, no time is judged."""

import asyncio

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.transport.http import EVENTS_PER_SLICE

from .server import Brain, Burst, http_fault_server
from .test_fault_classes import until

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]
WAIT = 20  # seconds: a bound on every wait, never a speed claim
MESSAGES = 10 * EVENTS_PER_SLICE


class Passes(list[int]):
    """The connection's log (``TaskLifecycle.logs``) that notes the loop pass each message came in."""

    def __init__(self, counter: list[int]) -> None:
        super().__init__()
        self.counter = counter

    def append(self, _params: object) -> None:
        super().append(self.counter[0])


async def test_a_burst_of_pushed_messages_gives_the_loop_back_between_slices():
    brain = Brain()
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        await until(lambda: client.session.transport.push_channel_open)
        loop, counter, ticking = asyncio.get_running_loop(), [0], [True]

        def tick() -> None:  # one increment per pass of the loop
            counter[0] += 1
            if ticking[0]:
                loop.call_soon(tick)

        passes = Passes(counter)
        client.lifecycle.logs = passes  # type: ignore[assignment]
        tick()
        brain.push(
            Burst(
                [
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "data": f"m{k}"},
                    }
                    for k in range(MESSAGES)
                ]
            )
        )
        await until(lambda: len(passes) == MESSAGES, WAIT)
        ticking[0] = False
    # Read in one chunk (or a few), yet handled in at least one loop pass per slice.
    assert len(set(passes)) >= MESSAGES // EVENTS_PER_SLICE, sorted(set(passes))
