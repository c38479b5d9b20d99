"""Request timeouts behind one shared timer (``deadlines.py``): each request still times out on its
own, a cancellation from outside stays a cancellation, and a finished request leaves no timer."""

import asyncio

import pytest

from mcp_tasks_jupyter.session.deadlines import COMPACT_MIN, Deadlines
from tests.support.timers import counting_timers

pytestmark = pytest.mark.anyio


async def _wait(deadlines: Deadlines, seconds: float, forever: asyncio.Event) -> str:
    deadline = deadlines.start(seconds)
    try:
        await forever.wait()
        return "answered"
    except asyncio.CancelledError:
        if deadline.timed_out():
            return "timed out"
        raise
    finally:
        deadline.finish()


async def test_each_request_times_out_on_its_own_deadline():
    deadlines, never, answer = Deadlines(), asyncio.Event(), asyncio.Event()
    short = asyncio.create_task(_wait(deadlines, 0.05, never))
    answered = asyncio.create_task(_wait(deadlines, 0.05, answer))
    long = asyncio.create_task(_wait(deadlines, 30, never))
    answer.set()
    assert await answered == "answered"
    assert await asyncio.wait_for(short, 5) == "timed out"
    assert not long.done()  # its deadline is far: still waiting, the one timer armed for it
    long.cancel()
    with pytest.raises(asyncio.CancelledError):
        await long  # a cancellation from outside is not a timeout
    deadlines.close()


async def test_an_outside_cancellation_at_the_deadline_stays_a_cancellation():
    deadlines, never = Deadlines(), asyncio.Event()
    task = asyncio.create_task(_wait(deadlines, 0.05, never))
    await asyncio.sleep(0)
    task.cancel()  # cancelled from outside, and its deadline expires too
    await asyncio.sleep(0.1)
    with pytest.raises(asyncio.CancelledError):
        await task
    deadlines.close()


async def test_finished_requests_arm_no_timer_of_their_own():
    deadlines, answer = Deadlines(), asyncio.Event()
    answer.set()
    with counting_timers() as live_timers:
        for _ in range(100):
            assert await _wait(deadlines, 30, answer) == "answered"
        assert len(live_timers()) <= 1  # one timer for all of them, at most
    deadlines.close()


async def test_the_heap_holds_the_requests_in_flight_not_every_finished_one():
    deadlines, never, answer = Deadlines(), asyncio.Event(), asyncio.Event()
    answer.set()
    for _ in range(1000):  # requests in order, each answered before the next: none stays behind
        assert await _wait(deadlines, 30, answer) == "answered"
    assert len(deadlines._heap) <= 1
    # Behind a long request at the top, finished ones are swept out of the heap in rebuilds.
    long = asyncio.create_task(_wait(deadlines, 0.3, never))
    short = asyncio.create_task(_wait(deadlines, 0.2, never))
    await asyncio.sleep(0)
    for _ in range(1000):
        assert await _wait(deadlines, 30, answer) == "answered"
    assert len(deadlines._heap) <= 2 * COMPACT_MIN
    # The requests still in flight keep their deadlines through every rebuild.
    assert await asyncio.wait_for(short, 5) == "timed out"
    assert await asyncio.wait_for(long, 5) == "timed out"
    deadlines.close()
