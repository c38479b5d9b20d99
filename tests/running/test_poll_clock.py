"""Sleeping pollers share one timer (``running/poll_clock.py``): each still wakes at its own due time,
a poller woken early leaves nothing behind, and a thousand sleeping tasks arm one timer, not one each."""

from __future__ import annotations

import asyncio

import pytest

from mcp_tasks_jupyter.protocol.task_state import TaskState
from mcp_tasks_jupyter.running.poll_clock import PollClock
from mcp_tasks_jupyter.running.poller import FIRST_POLL_SPREAD
from mcp_tasks_jupyter.tasks.control import control_of
from tests.support import eventually
from tests.support.timers import counting_timers

pytestmark = pytest.mark.anyio
WAIT = 20  # seconds: a bound on every wait, never a speed claim


async def test_alarms_ring_in_order_behind_one_timer():
    clock, loop = PollClock(), asyncio.get_running_loop()
    now = loop.time()
    events = [asyncio.Event() for _ in range(50)]
    with counting_timers() as live_timers:
        alarms = [clock.at(now + 0.01 * (50 - k), event) for k, event in enumerate(events)]
        assert len(live_timers()) == 1 and clock.waiting == 50
        early = alarms[0]  # the last due: woken otherwise before its time
        early.cancel()
        rung: list[int] = []

        async def wait(k: int) -> None:
            await events[k].wait()
            rung.append(k)

        waiters = [asyncio.create_task(wait(k)) for k in range(1, 50)]
        await asyncio.wait_for(asyncio.gather(*waiters), WAIT)
        assert rung == list(range(49, 0, -1))  # earliest due first
        assert all(a.rang for a in alarms[1:]) and not early.rang and not events[0].is_set()
        assert clock.waiting == 0 and not live_timers()
        clock.close()


async def test_sleeping_pollers_arm_one_timer_between_them(connect_demo):
    tasks = 40
    with counting_timers() as live_timers:
        async with connect_demo("--poll-interval", "3000") as client:
            handles = [
                await client.start_task("slow_compute", {"seconds": 600, "steps": 2, "label": f"t{k}"})
                for k in range(tasks)
            ]
            # every poller runs at once into its first sleep (the first poll is 3 s on): wait until all sleep
            clock = client.lifecycle.clock
            await eventually(lambda: clock.waiting == tasks, timeout=WAIT, what="every poller asleep")
            assert not any(h.done() for h in handles)
            # Every poller sleeps until its next poll: one timer for all of them (the few others are the
            # session's own), where a timeout per sleep armed one timer per task.
            assert len(live_timers()) < tasks // 4, live_timers()
            await asyncio.gather(*(h.cancel() for h in handles))
            assert all(h.done() for h in handles)


async def test_a_poller_whose_task_ended_before_it_sleeps_does_not_sleep(connect_demo):
    """A push that ends the task in the loop pass where the poller's alarm rang (both set its event) left
    the poller asleep until its next due time, ten intervals away once pushes are trusted: the result
    came that much later (completion_latency.py: 10 s in one run of three)."""
    async with connect_demo("--poll-interval", "60000") as client:
        handle = await client.start_task("slow_compute", {"seconds": 600, "steps": 2})
        assert handle.task_id is not None
        control_of(handle).apply(TaskState(handle.task_id, "completed"))  # as a push would, between two sleeps
        sleeping = asyncio.create_task(
            client.lifecycle._pollers[handle].sleep_until(asyncio.get_running_loop().time(), 0.0)
        )
        await asyncio.sleep(0)  # one loop pass: it returns at once, with nothing to wait for
        assert sleeping.done(), "a poller whose task ended went to sleep until its next due time"
        await sleeping


async def test_tasks_started_together_poll_spread_over_their_interval(connect_demo):
    """Tasks started in one burst (as ``client.map`` starts them) polled in the same moment every interval,
    a thousand requests at once each second: their first polls are now spread over the last half of the
    first interval, and each later poll is one interval after the task's own last, so they stay apart."""
    tasks, interval = 60, 2.0
    # (no status pushes: a task whose changes are pushed is polled ten intervals apart)
    async with connect_demo("--poll-interval", str(int(interval * 1000)), "--no-status-notifications") as client:
        loop = asyncio.get_running_loop()
        polled: dict[str, list[float]] = {}
        real_get = client.dialect.get

        async def get(task_id: str) -> TaskState:
            polled.setdefault(task_id, []).append(loop.time())
            return await real_get(task_id)

        client.dialect.get = get
        began = loop.time()
        handles = await asyncio.gather(
            *(
                client.start_task("slow_compute", {"seconds": 600, "steps": 2, "label": f"t{k}"})
                for k in range(tasks)
            )
        )
        started = loop.time()
        await eventually(
            lambda: len(polled) == tasks and all(len(times) >= 2 for times in polled.values()),
            timeout=WAIT,
            what="two polls of every task",
        )
        firsts = sorted(times[0] for times in polled.values())
        seconds = sorted(times[1] for times in polled.values())
        # Spread over about half an interval (1 s here); bunched, they came within a few milliseconds.
        assert firsts[-1] - firsts[0] >= 0.2 * interval, firsts
        assert seconds[-1] - seconds[0] >= 0.2 * interval, seconds
        # None earlier than half an interval after its task started, none later than one (and a bit).
        assert firsts[0] >= began + (1 - FIRST_POLL_SPREAD) * interval, firsts[0] - began
        assert firsts[-1] <= started + interval + 0.5, firsts[-1] - started
        await asyncio.gather(*(h.cancel() for h in handles))
