"""What a handle keeps of its task's log lines (``TaskLifecycle.log``): every line, newest last, without the
``_meta`` tag that only named its task (most of what a short line cost a sweep's 100,000 handles), and their
keys, level and logger shared between lines. Against the demo, whose ``slow_compute`` logs each step."""

from __future__ import annotations

import pytest

from tests.support.demo_fixtures import demo_client

pytestmark = pytest.mark.anyio
WAIT = 30  # seconds: a bound on every wait, never a speed claim


async def test_a_handles_log_lines_keep_what_they_say_without_their_task_tag():
    async with demo_client("stdio", "--poll-interval", "100") as client:
        first = await client.start_task("slow_compute", {"seconds": 0.05, "steps": 2, "label": "a"})
        second = await client.start_task("slow_compute", {"seconds": 0.05, "steps": 2, "label": "b"})
        await first.wait(timeout=WAIT)
        await second.wait(timeout=WAIT)
        assert isinstance(first.logs, list) and len(first.logs) >= 2
        for line in first.logs + second.logs:
            assert set(line) == {"level", "logger", "data"}, line  # the related-task tag is left out
        assert all(line["data"].startswith("a: ") for line in first.logs)  # what it says, whole
        one, other = first.logs[0], second.logs[0]
        assert one["logger"] is other["logger"] and next(iter(one)) is next(iter(other))  # shared, not copied
