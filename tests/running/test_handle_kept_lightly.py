"""What a handle keeps for its life, as light as it can be (issue 33 item 4: a sweep holds 10,000 handles and
more): slots, not a ``__dict__``; the containers nearly every task leaves empty made only when a first item
comes; its log lines compact until its ``logs`` are first read, then the same list of dicts as before; a
batch's handles sharing one ``HandleControls`` that says their batch and their connection, with no entry per
handle in a table of the batch's or the connection's."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import pytest

from mcp_tasks_jupyter.running import batch as batch_module
from mcp_tasks_jupyter.running.batch import batch_of
from mcp_tasks_jupyter.tasks.control import control_of
from mcp_tasks_jupyter.tasks.handle import LOG_LINES_KEPT, HandleControls, TaskHandle
from tests.support.demo_fixtures import demo_client

WAIT = 30  # seconds: a bound on every wait, never a speed claim


async def _no_op(_handle: TaskHandle) -> None:
    return None


def _with_handle(check: Any) -> None:
    """Run ``check(handle)`` on a fresh handle, on a loop (a handle's future needs one)."""

    async def run() -> None:
        controls = HandleControls(_no_op, lambda: False)
        check(TaskHandle("demo", "tool", {"a": 1}, runs_as_task=True, progress_token="t", controls=controls))

    asyncio.run(run())


def test_a_handle_has_slots_is_weakly_referenced_and_makes_no_empty_containers() -> None:
    def check(handle: TaskHandle) -> None:
        assert not hasattr(handle, "__dict__")
        assert weakref.ref(handle)() is handle
        state = handle._s
        assert (state.pending_input, state.answered, state.questions, state.callbacks) == (None,) * 4
        assert (state.lines, state.logs) == (None, None)
        # readers see empty containers, as before
        assert handle.pending_input == {} and handle.answered == [] and handle.questions == []
        assert (state.pending_input, state.answered, state.questions) == (None,) * 3  # reading made none

    _with_handle(check)


def test_questions_answers_and_observers_are_kept_once_they_come() -> None:
    def check(handle: TaskHandle) -> None:
        control = control_of(handle)
        seen: list[str] = []
        stop = handle.on_change(lambda h: seen.append(h.status))
        control.question_opened(7, {"message": "which?"})
        assert handle.pending_input == {7: {"message": "which?"}} and seen == ["working"]
        control.question_answered("which?", "person", "accept", {"pick": "a"})
        assert handle.answered == [("which?", "person", "accept")]
        assert handle.questions == [
            {"question": "which?", "source": "person", "action": "accept", "content": {"pick": "a"}}
        ]
        assert control.open_questions_dropped() == [7] and handle.pending_input == {}
        control.question_closed(7)
        stop()
        control.changed()
        assert seen == ["working", "working"]  # the observer removed hears no more

    _with_handle(check)


def test_log_lines_are_compact_until_read_then_the_same_dicts_as_before() -> None:
    lines = [
        {"level": "info", "logger": "demo", "data": "step 1"},
        {"level": "warning", "data": {"n": 2}},  # no logger
        {"level": "info", "logger": "demo", "data": "x", "_meta": {"other": 1}},  # kept as its dict
        {"data": "d", "level": "info", "logger": "demo"},  # keys in another order: kept as its dict
    ]

    def check(handle: TaskHandle) -> None:
        control = control_of(handle)
        for line in lines:
            control.logged(dict(line))
        kept = handle._s.lines
        assert kept is not None and [type(line) for line in kept] == [tuple, tuple, dict, dict]
        logs = handle.logs
        assert logs == lines and [list(line) for line in logs] == [list(line) for line in lines]
        assert isinstance(logs, list) and handle.logs is logs and handle.logs[0] is logs[0]
        control.logged({"level": "info", "logger": "demo", "data": "later"})
        assert handle.logs is logs and logs[-1] == {"level": "info", "logger": "demo", "data": "later"}

    _with_handle(check)


@pytest.mark.parametrize("read_first", [False, True])
def test_at_most_the_kept_number_of_lines_newest_last(read_first: bool) -> None:
    def check(handle: TaskHandle) -> None:
        control = control_of(handle)
        if read_first:
            assert handle.logs == []
        for n in range(LOG_LINES_KEPT + 3):
            control.logged({"level": "info", "logger": "demo", "data": f"line {n}"})
        logs = handle.logs
        assert len(logs) == LOG_LINES_KEPT
        assert logs[0]["data"] == "line 3" and logs[-1]["data"] == f"line {LOG_LINES_KEPT + 2}"

    _with_handle(check)


@pytest.mark.anyio
async def test_a_batchs_handles_say_their_batch_and_connection_with_no_entry_each() -> None:
    async with demo_client("stdio") as client, demo_client("stdio") as other:
        batch = await client.map("slow_compute", [{"seconds": 0.01, "label": f"i{i}"} for i in range(5)], limit=2)
        single = await client.start_task("slow_compute", {"seconds": 0.01, "label": "one"})
        await batch.gather(timeout=WAIT)
        await single.wait(timeout=WAIT)
        assert [batch_of(h) for h in batch] == [batch.id] * 5 and batch_of(single) is None
        assert not any(h in batch_module._BATCH_OF for h in batch)  # no entry per handle
        assert len({id(control_of(h).controls) for h in batch}) == 1  # one HandleControls for the batch
        observers = [h._s.callbacks for h in batch]
        assert len({id(o[0]) for o in observers if o}) == 1  # the batch's observer: one object for them all
        assert all(client.lifecycle.owns(h) for h in [*batch, single])
        assert not any(other.lifecycle.owns(h) for h in [*batch, single])
        # a batch handle's cancel is still the batch's: an ended one is left as it is
        await batch[0].cancel()
        assert batch[0].status == "completed"
