"""The soak: many tasks of mixed lengths through a faulty network (``fault_proxy.py``) to the demo server over
Streamable HTTP, with a server restart, and a check of what came of every task. ``tests/faults/test_soak.py``
runs a short one; ``benchmarks/soak.py`` (``make soak``) a long one and prints the figures.

Each task is one of: a computation (its result names its label), a tool error, a research question the
server asks and ``answers=`` settles, or a long computation cancelled while it runs. What each must end with
is known in advance; a task the server was running when it restarted may instead end ``lost`` saying that the
server no longer knows it (the server lost it). Anything else is a problem the report lists.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import os
import random
import signal
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index.task_index import TaskIndex
from mcp_tasks_jupyter.tasks.status import shown_status

from .fault_proxy import FaultProxy, FaultRates
from .processes import free_port, python_env

#: The client's request timeout in the soak: short, so that held requests time out often.
REQUEST_TIMEOUT_S = 2.0
KINDS = ("compute", "tool_error", "question", "cancel")
#: The share of each kind of task (``KINDS``), by mix: the CI soak's, and issue 30's long soak (800
#: computations of which a tenth cancelled, 200 research questions, of 1,000).
MIXES = {"mixed": (0.55, 0.15, 0.15, 0.15), "issue30": (0.72, 0.0, 0.2, 0.08)}
WEIGHTS = MIXES["mixed"]
#: How long a task may take to end once started before the soak calls it stuck (a problem): longer than
#: anything in the plans takes through the faults, shorter than the demo's retention (600 s), so a task
#: left waiting shows here as not ended rather than as expired.
END_WAIT_S = 240.0


@dataclass
class Plan:
    """One task of the soak and what it must end with."""

    number: int
    kind: str
    arguments: dict[str, Any]
    answers: dict[str, Any] | None = None
    cancel_after: float | None = None
    handle: mtj.TaskHandle | None = None
    started_at: float | None = None
    start_attempts: int = 0
    dialect: str = "2025-11-25"


@dataclass
class SoakReport:
    seed: int
    tasks: int
    dialect: str = "2025-11-25"
    duration_s: float = 0.0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    faults: collections.Counter[str] = field(default_factory=collections.Counter)
    new_sessions: int = 0
    restarts: int = 0
    lost_by_server: int = 0
    start_retries: int = 0
    peak_memory_mb: float = 0.0
    memory_growth_mb: float = 0.0
    open_fds_before: int = 0
    open_fds_after: int = 0
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"seed {self.seed}: {self.tasks} tasks ({self.dialect}) in {self.duration_s:.0f} s",
            "outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())),
            "faults injected: " + ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())),
            f"server restarts {self.restarts}, tasks the server lost in them {self.lost_by_server}, "
            f"new sessions {self.new_sessions}, task starts retried {self.start_retries}",
            f"client memory: peak {self.peak_memory_mb:.1f} MB (tracemalloc), growth first half to end "
            f"{self.memory_growth_mb:+.1f} MB; open files {self.open_fds_before} before, "
            f"{self.open_fds_after} after",
            f"problems: {len(self.problems)}",
            *(f"  {p}" for p in self.problems[:20]),
        ]


class DemoProcess:
    """The demo server over HTTP on a fixed port, which the soak can restart."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        argv = [sys.executable, "-m", "mcp_tasks_jupyter.demo", "--http", "--port", str(self.port)]
        self.process = await asyncio.create_subprocess_exec(
            *argv,
            "--poll-interval",
            "500",
            stdout=asyncio.subprocess.PIPE,
            env=python_env(),
            start_new_session=True,
        )
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 30)
        if b"listening on" not in line:
            raise RuntimeError(f"the demo server did not start: {line!r}")

    async def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


def plans(count: int, seed: int, weights: tuple[float, ...] = WEIGHTS) -> list[Plan]:
    rng = random.Random(seed)
    made = []
    for number in range(count):
        kind = rng.choices(KINDS, weights)[0]
        label = f"soak-{number}"
        if kind == "compute":
            made.append(Plan(number, kind, {"seconds": rng.uniform(0.5, 12), "steps": 3, "label": label}))
        elif kind == "tool_error":
            made.append(
                Plan(number, kind, {"seconds": rng.uniform(0.5, 8), "mode": "tool_error", "message": label})
            )
        elif kind == "question":
            topic = f"topic {number}"
            answer = {"interpretation": f"{topic} (economics)", "depth": 1}
            arguments = {"topic": topic, "ambiguous": True, "stage_seconds": rng.uniform(0.2, 2)}
            made.append(Plan(number, kind, arguments, answers=answer))
        else:
            arguments = {"seconds": 600, "steps": 2, "label": label}
            made.append(Plan(number, kind, arguments, cancel_after=rng.uniform(0.5, 8)))
    return made


TOOLS = {"compute": "slow_compute", "tool_error": "failing_job", "question": "research", "cancel": "slow_compute"}


async def run_soak(
    *,
    tasks: int,
    seed: int,
    index_path: Path,
    concurrency: int = 200,
    restart_after_s: float | None = 15.0,
    rates: FaultRates | None = None,
    settle_timeout_s: float = 300.0,
    weights: tuple[float, ...] = WEIGHTS,
    dialect: str = "2025-11-25",
) -> SoakReport:
    """Run the soak; the report lists every problem (none: every task ended as the server decided)."""
    report = SoakReport(seed=seed, tasks=tasks, dialect=dialect)
    tracemalloc.start()
    report.open_fds_before = len(os.listdir("/proc/self/fd"))
    began = time.monotonic()
    demo = DemoProcess(free_port())
    await demo.start()
    proxy = FaultProxy(demo.url, seed, rates or FaultRates(), delay_s=REQUEST_TIMEOUT_S + 0.5)
    await proxy.start()
    restart_window: list[float] = []
    index = TaskIndex(index_path)
    try:
        async with mtj.connect(
            proxy.url, timeout=REQUEST_TIMEOUT_S, reconnect_for=120, index=index, dialect=dialect
        ) as client:
            work = plans(tasks, seed, weights)
            slots = asyncio.Semaphore(concurrency)
            restarter = (
                asyncio.create_task(_restart(demo, restart_after_s, restart_window, report))
                if restart_after_s is not None
                else None
            )
            halfway: list[int] = []
            drivers = [asyncio.create_task(_drive(client, plan, slots, report, halfway, tasks)) for plan in work]
            _done, pending = await asyncio.wait(drivers, timeout=settle_timeout_s)
            for late in pending:
                late.cancel()
                report.problems.append("a task did not end within the soak's time (see the plans still running)")
            if restarter is not None:
                await restarter
            gc.collect()
            current, peak = tracemalloc.get_traced_memory()
            report.peak_memory_mb = peak / 2**20
            report.memory_growth_mb = (current - (halfway[0] if halfway else current)) / 2**20
            _check(work, restart_window, report)
            _check_index(work, index, report)
    finally:
        await proxy.stop()
        await demo.stop()
        tracemalloc.stop()
    report.duration_s = time.monotonic() - began
    report.faults = proxy.injected
    report.new_sessions = max(0, proxy.forwarded["initialize"] - 1)
    gc.collect()
    report.open_fds_after = len(os.listdir("/proc/self/fd"))
    return report


async def _restart(demo: DemoProcess, after: float, window: list[float], report: SoakReport) -> None:
    await asyncio.sleep(after)
    window.append(time.monotonic())
    await demo.stop()
    await asyncio.sleep(1.0)
    await demo.start()
    window.append(time.monotonic())
    report.restarts += 1


async def _drive(
    client: mtj.Client, plan: Plan, slots: asyncio.Semaphore, report: SoakReport, halfway: list[int], total: int
) -> None:
    async with slots:
        await asyncio.sleep(plan.number * 0.05)  # a steady stream of starts, not one burst
        for attempt in range(1, 20):
            plan.start_attempts = attempt
            try:
                plan.started_at = time.monotonic()
                plan.handle = await client.start_task(TOOLS[plan.kind], plan.arguments, answers=plan.answers)
                break
            except mtj.MCPError:  # the server is restarting: a person would try again
                report.start_retries += 1
                await asyncio.sleep(min(5.0, 0.5 * attempt))
        if plan.handle is None:
            report.problems.append(f"task {plan.number} could not be started")
            return
        if plan.cancel_after is not None:
            await asyncio.sleep(plan.cancel_after)
            for attempt in range(1, 20):
                if plan.handle.done():
                    break
                try:
                    await plan.handle.cancel()
                    break
                except mtj.MCPError:
                    await asyncio.sleep(min(5.0, 0.5 * attempt))
        try:
            await asyncio.wait_for(plan.handle, END_WAIT_S)
        except TimeoutError:
            handle = plan.handle
            report.problems.append(
                f"task {plan.number} ({plan.kind}, {handle.task_id}) did not end within {END_WAIT_S:.0f} s: "
                f"{handle.status} {handle.status_message!r}, questions answered {len(handle.questions)}"
            )
        except Exception:
            pass
        if len(halfway) == 0 and plan.number >= total // 2:
            gc.collect()
            halfway.append(tracemalloc.get_traced_memory()[0])


def _lost_by_server(plan: Plan, window: list[float]) -> bool:
    """The task ran on the server when it restarted (so the server lost it) and ended saying so."""
    handle = plan.handle
    assert handle is not None
    if not window or plan.started_at is None or plan.started_at > window[-1]:
        return False
    error = handle.exception()
    if isinstance(error, mtj.TaskNotFound):
        return True
    return isinstance(error, mtj.TaskLost) and "no longer knows" in str(error)


def _check(work: list[Plan], window: list[float], report: SoakReport) -> None:
    for plan in work:
        handle = plan.handle
        if handle is None or not handle.done():
            continue
        outcome = shown_status(handle)
        report.outcomes[outcome] += 1
        if _lost_by_server(plan, window):
            report.lost_by_server += 1
            continue
        error = handle.exception()
        name = f"task {plan.number} ({plan.kind}, {handle.task_id})"
        if plan.kind == "cancel":
            if not isinstance(error, mtj.TaskCancelled):
                report.problems.append(f"{name}: expected cancelled, got {outcome}: {error}")
            continue
        if error is not None:
            said = getattr(error, "error", None)
            report.problems.append(f"{name}: expected a result, got {outcome}: {error!r} {said or ''}")
            continue
        result = handle.result()
        if plan.kind == "compute" and (
            result.is_error or result.structured.get("label") != plan.arguments["label"]
        ):
            report.problems.append(f"{name}: a wrong result {result!r}")
        elif plan.kind == "tool_error" and (outcome != "error" or plan.arguments["message"] not in result.text):
            report.problems.append(f"{name}: expected the tool error, got {outcome} {result!r}")
        elif plan.kind == "question":
            chosen = (result.structured or {}).get("interpretation")
            if result.is_error or chosen != plan.answers["interpretation"]:  # type: ignore[index]
                report.problems.append(f"{name}: the answer did not arrive: {outcome} {result.text[:120]!r}")
            if len(handle.questions) != 1:
                report.problems.append(f"{name}: its question was answered {len(handle.questions)} times")


def _check_index(work: list[Plan], index: TaskIndex, report: SoakReport) -> None:
    index.flush()
    records = {r.id: r for r in index.records()}
    for plan in work:
        handle = plan.handle
        if handle is None or not handle.done() or handle.index_row is None:
            continue
        record = records.get(handle.index_row)
        if record is None:
            report.problems.append(f"task {plan.number}: no record in the task index")
        elif record.status != shown_status(handle) and record.finished_at is not None:
            report.problems.append(
                f"task {plan.number}: the index says {record.status}, the handle {shown_status(handle)}"
            )
