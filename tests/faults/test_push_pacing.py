"""Push-aware pacing: while the GET stream delivers a task's ``notifications/tasks/status``, the task
is polled only as a safety net (10 intervals after the last news of it); when the stream drops, or
falls silent while the task goes on changing, polling goes back to the task's own interval. The
``tasks/get`` the scripted server received are counted over phases of equal length: counts are
compared, no time is judged."""

import asyncio
from collections.abc import Callable

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.running import poller

from .server import Brain, http_fault_server
from .test_fault_classes import until

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

INTERVAL_MS = 100  # the least a client takes (protocol.bounds)
PHASE_S = 3.0


async def polls_during(brain: Brain, seconds: float) -> int:
    before = len(brain.requests("tasks/get"))
    await asyncio.sleep(seconds)
    return len(brain.requests("tasks/get")) - before


async def pacing(change: Callable[[Brain, str, int], None], between: Callable[..., object]) -> tuple[int, int]:
    """Polls made while the task's every change is pushed, then after ``between(server)``, with
    ``change(brain, task_id, n)`` making the task's n-th change all along."""
    brain = Brain(poll_interval_ms=INTERVAL_MS)
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job", {})
        await until(lambda: client.session.transport.push_channel_open)
        assert handle.task_id is not None

        async def changing() -> None:
            for n in range(1, 10_000):
                change(brain, handle.task_id, n)
                await asyncio.sleep(INTERVAL_MS / 1000)

        changes = asyncio.create_task(changing())
        try:
            pushed = await polls_during(brain, PHASE_S)
            between(server)
            await asyncio.sleep(0.2)  # the change has reached the client
            after = await polls_during(brain, PHASE_S)
        finally:
            changes.cancel()
        assert handle.status == "working" and handle.status_message.startswith("step ")
    return pushed, after


def pushed_change(brain: Brain, task_id: str, n: int) -> None:
    task = brain.tasks[task_id]
    task.status_message = f"step {n}"
    if not getattr(brain, "silent", False):
        wire = task.wire(brain.poll_interval_ms, brain.ttl_ms)
        brain.push({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": wire})


async def test_pushes_make_polls_a_safety_net_and_a_dropped_stream_brings_them_back():
    pushed, dropped = await pacing(pushed_change, lambda server: server.drop_streams())
    asked = PHASE_S * 1000 / INTERVAL_MS  # 30 polls at the task's own interval
    # With pushes (one per interval): next to no polls, a few where a poll overtook a push.
    assert pushed <= asked / 4, (pushed, dropped)
    # The stream gone (and refused): polls at the task's own interval again.
    assert dropped >= 3 * max(pushed, 3), (pushed, dropped)


async def test_a_stream_that_falls_silent_while_the_task_changes_brings_polling_back():
    def silence(server) -> None:
        server.brain.silent = True  # the stream stays open; the changes are no longer pushed

    pushed, silent = await pacing(pushed_change, silence)
    assert pushed <= PHASE_S * 1000 / INTERVAL_MS / 4, (pushed, silent)
    assert silent >= 3 * max(pushed, 3), (pushed, silent)


async def test_without_a_push_channel_polls_keep_the_tasks_interval(monkeypatch):
    # The same pushes, but the safety net is turned off (factor 1): as many polls as without pushes,
    # which shows that the counts above come from the pacing, not from the server or the machine.
    monkeypatch.setattr(poller, "PUSHED_POLL_FACTOR", 1)
    pushed, dropped = await pacing(pushed_change, lambda server: server.drop_streams())
    assert pushed >= PHASE_S * 1000 / INTERVAL_MS / 3, (pushed, dropped)


async def test_a_status_pushed_before_the_creation_answer_is_kept_for_its_task():
    """The server pushes a new task's status on the GET stream before its ``tools/call`` answer has come (two
    connections: either may arrive first). The push is kept until the answer names the task: the handle shows
    its status message at once, and the task is polled only as a safety net, as when pushes come later."""
    brain = Brain(poll_interval_ms=INTERVAL_MS)

    async def call_pushing_first(message: dict) -> dict:
        answer = brain._call(message["params"])
        task = brain.tasks[answer["task"]["taskId"]]
        task.status_message = "pushed before the answer"
        brain.push({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                    "params": task.wire(brain.poll_interval_ms, brain.ttl_ms)})  # fmt: skip
        await asyncio.sleep(0.3)  # the push is on the client's side before the answer
        return answer

    brain.script["tools/call"] = call_pushing_first
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        await until(lambda: client.session.transport.push_channel_open)
        handle = await client.start_task("job", {"seconds": 2.0})
        assert handle.status_message == "pushed before the answer"
        polls = await polls_during(brain, 1.5)
        await handle
    # At the task's own interval it would be polled about 15 times in 1.5 s; as a safety net, at most once.
    assert polls <= 2, polls
