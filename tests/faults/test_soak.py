"""The soak, short (issue 25, item 3): 200 tasks of mixed lengths (results, tool errors, questions answered by
``answers=``, cancellations) through the project's fault-injecting proxy to the demo server over Streamable
HTTP, with a server restart midway. Every task must end as the server decided, or lost saying the server lost
it; no question is answered twice; memory and open files stay bounded; the task index agrees with the handles.
``make soak`` runs the long one (``benchmarks/soak.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.soak import run_soak

pytestmark = [pytest.mark.anyio, pytest.mark.loopback, pytest.mark.timeout(300)]

SEED = 7


async def test_two_hundred_tasks_through_a_faulty_network_and_a_restart(tmp_path: Path) -> None:
    report = await run_soak(tasks=200, seed=SEED, index_path=tmp_path / "tasks.sqlite3", restart_after_s=15)
    print("\n".join(report.lines()))
    assert report.problems == []
    assert sum(report.outcomes.values()) == 200  # every task ended
    assert {"completed", "error", "cancelled"} <= set(report.outcomes)
    assert report.restarts == 1 and report.lost_by_server == report.outcomes["lost"]
    assert len(report.faults) >= 4 and sum(report.faults.values()) >= 10  # the network did misbehave
    assert report.memory_growth_mb < 10
    assert report.open_fds_after <= report.open_fds_before + 10
