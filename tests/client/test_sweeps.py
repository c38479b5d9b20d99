"""Sweeps that outlive their process (issue 33): ``client.map`` records its batch in the task index, and a
later process resumes it without sending any item twice, against the real demo server, which counts each
call it runs with its arguments (``--count-arguments``).

The process that dies is a Python process of the test's own, killed with SIGKILL in the middle of a
2,000-item sweep (``tests/jupyter/test_sweep_kernel.py`` does the same to a Jupyter kernel): what it had
recorded is all a resume has. Nothing here asserts a timing.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index.task_index import TaskIndex
from mcp_tasks_jupyter.jupyter.batch_display import summary_line
from tests.support import start_demo_http
from tests.support.demo_server import demo_argv
from tests.support.paths import PYTHON
from tests.support.peers import LISTENING_LINE, START_TIMEOUT
from tests.support.postgres import run_sql
from tests.support.processes import free_port, python_env, spawn, wait_for_stdout

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]
WAIT = 40  # seconds: a bound on every wait, never a speed claim
SIZE = 2000
LIMIT = 64


def items(n: int, seconds: float = 0.2) -> list[dict]:
    return [{"seconds": seconds, "steps": 1, "label": f"i{i}"} for i in range(n)]


def calls_by_label(path: Path) -> collections.Counter[str]:
    counted: collections.Counter[str] = collections.Counter()
    for line in path.read_text().splitlines():
        _name, _, arguments = line.partition("\t")
        counted[json.loads(arguments)["label"]] += 1
    return counted


def sweep_rows(location: str, sweep: str) -> list[tuple]:
    return run_sql(
        location,
        "SELECT position, state, task_id, record, status, note, sends, arguments FROM sweep_items "
        "WHERE sweep = ? ORDER BY position",
        (sweep,),
    )


async def eventually(check, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


@pytest.fixture
def counts(tmp_path: Path) -> Path:
    path = tmp_path / "calls.txt"
    path.touch()
    return path


@pytest.fixture
def demo_http(counts: Path) -> Iterator[str]:
    with start_demo_http("--count-arguments", str(counts), "--poll-interval", "100", "--sweeps") as url:
        yield url


async def test_a_sweep_is_recorded_item_by_item(demo_http: str, counts: Path, index_location: str) -> None:
    async with mtj.connect(demo_http, index=index_location, protocol_version="2025-11-25") as client:
        batch = await client.map("slow_compute", items(20, 0.05), limit=4)
        assert batch.sweep is not None
        results = await batch.gather(timeout=WAIT)
        assert [r.structured["label"] for r in results] == [f"i{i}" for i in range(20)]
        client.index.flush()
        await eventually(lambda: run_sql(index_location, "SELECT finished_at FROM sweeps")[0][0] is not None)
    [(tool, total, limit)] = run_sql(index_location, "SELECT tool, total, item_limit FROM sweeps")
    assert (tool, total, limit) == ("slow_compute", 20, 4)
    rows = sweep_rows(index_location, batch.sweep)
    assert [r[0] for r in rows] == list(range(20))
    assert {r[1] for r in rows} == {"ended"} and {r[4] for r in rows} == {"completed"}
    assert all(r[2] and r[3] for r in rows) and {r[5] for r in rows} == {None} and {r[6] for r in rows} == {1}
    records = dict(run_sql(index_location, "SELECT id, task_id FROM tasks"))
    assert all(records[r[3]] == r[2] for r in rows)  # each item's record is its task's
    assert calls_by_label(counts) == dict.fromkeys((f"i{i}" for i in range(20)), 1)
    # mcp-tasks sweeps lists it with its counts; list --batch shows its items, in order
    env = python_env({"MTJ_INDEX": index_location})
    listed = subprocess.run([sys.executable, "-m", "mcp_tasks_jupyter", "sweeps"], capture_output=True, text=True,
                            env=env, timeout=60, check=True).stdout  # fmt: skip
    assert batch.sweep in listed and "20 ended" in listed and "finished" in listed, listed
    shown = subprocess.run([sys.executable, "-m", "mcp_tasks_jupyter", "list", "--batch", batch.sweep[:6]],
                           capture_output=True, text=True, env=env, timeout=60, check=True).stdout  # fmt: skip
    lines = shown.splitlines()
    assert lines[0].startswith(f"sweep {batch.sweep}: slow_compute") and len(lines) == 22, shown
    assert "label=i19" in lines[-1] and "completed" in lines[-1]


async def test_a_secret_argument_is_kept_only_as_a_keyed_hash(demo_http: str, index_location: str) -> None:
    secret = "sk-live-" + os.urandom(8).hex()
    jobs = [{"label": f"s{i}", "api_key": secret} for i in range(3)]
    async with mtj.connect(demo_http, index=index_location, protocol_version="2025-11-25") as client:
        batch = await client.map("signed_job", jobs, limit=2)
        await batch.gather(timeout=WAIT)
        sweep = batch.sweep
        assert sweep is not None
        client.index.flush()
        await eventually(lambda: run_sql(index_location, "SELECT finished_at FROM sweeps")[0][0] is not None)
        dump = "\n".join(
            repr(row)
            for table in ("sweeps", "sweep_items", "sweep_owners", "tasks")
            for row in run_sql(index_location, f"SELECT * FROM {table}")
        )
        assert secret not in dump
        kept = [json.loads(r[7]) for r in sweep_rows(index_location, sweep)]
        assert all(k["api_key"].startswith("<redacted hmac:") for k in kept)
        assert len({k["api_key"] for k in kept}) == 1  # the same secret, the same hash: matched, never shown
        # the same items match the sweep (resume=True finds it finished: a new one starts) ...
        again = await client.map("signed_job", jobs, limit=2, resume=True)
        assert again.said == "no earlier sweep of these items to resume: started a new one"
        await again.gather(timeout=WAIT)
        # ... and a sweep named by its id cannot be sent from its record: its secret is not there
        with pytest.raises(mtj.UsageError, match="secret argument"):
            await client.map("signed_job", None, resume=sweep)


def _run_and_be_killed(
    argv_or_url: str | list[str], location: str, tmp_path: Path, counts: Path, after: int
) -> tuple[str, int]:
    """Start a process that runs a 2,000-item sweep and SIGKILL it once the server ran ``after`` calls;
    (the sweep's id, the calls counted when it was killed)."""
    script = tmp_path / "sweep.py"
    script.write_text(
        "import asyncio, sys, json\n"
        "import mcp_tasks_jupyter as mtj\n"
        "async def main():\n"
        f"    target = json.loads({json.dumps(json.dumps(argv_or_url))})\n"
        f"    async with mtj.connect(target, index={location!r}, protocol_version='2025-11-25') as c:\n"
        f"        b = await c.map('slow_compute', {items(SIZE)!r}, limit={LIMIT})\n"
        "        print('sweep', b.sweep, flush=True)\n"
        "        await b.gather()\n"
        "asyncio.run(main())\n"
    )
    process = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=python_env(), start_new_session=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("sweep "), line
        sweep = line.split()[1]
        deadline = time.monotonic() + WAIT
        while len(counts.read_text().splitlines()) < after:
            assert time.monotonic() < deadline and process.poll() is None, "the sweep did not get going"
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)  # the process and its stdio server, as a dying kernel
        process.wait(10)
        return sweep, len(counts.read_text().splitlines())
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def _check_exactly_once(location: str, sweep: str, counts: Path, results: list, *, server_kept: bool) -> None:
    """Every item's result in order; each item called once at the server, but those noted as sent again."""
    assert [r.structured["label"] for r in results] == [f"i{i}" for i in range(SIZE)]
    rows = sweep_rows(location, sweep)
    calls = calls_by_label(counts)
    noted = {f"i{r[0]}": r[5] for r in rows if r[5] is not None}
    for i in range(SIZE):
        label = f"i{i}"
        assert calls[label] == (1 if label not in noted else calls[label]), (label, calls[label])
        assert 1 <= calls[label] <= 2, (label, calls[label])
    in_doubt = [label for label, note in noted.items() if "in flight" in note]
    assert len(in_doubt) <= LIMIT, len(in_doubt)
    if server_kept:  # over HTTP the server kept its tasks: nothing it had is sent again as lost
        assert not [label for label, note in noted.items() if "no longer had" in note]
    assert {r[1] for r in rows} == {"ended"}


@pytest.mark.timeout(240)
async def test_a_killed_process_s_sweep_resumes_over_http_without_sending_twice(
    demo_http: str, counts: Path, tmp_path: Path, index_location: str
) -> None:
    sweep, at_kill = _run_and_be_killed(demo_http, index_location, tmp_path, counts, after=SIZE // 3)
    assert at_kill < SIZE
    async with mtj.connect(demo_http, index=index_location, protocol_version="2025-11-25") as client:
        batch = await client.map("slow_compute", items(SIZE), limit=LIMIT, resume=True)
        assert batch.sweep == sweep and batch.resumed is not None, batch.said
        resumed = batch.resumed
        assert batch.view().resumed == batch.said and batch.said.startswith(f"resumed sweep {sweep}: ")
        assert batch.said in summary_line(batch)  # the saved notebook tells the same
        assert resumed.before > 0 and resumed.fresh > 0 and resumed.reattached + resumed.before > 0
        assert resumed.before + resumed.reattached + resumed.lost + resumed.in_doubt + resumed.fresh == SIZE
        results = await batch.gather(timeout=WAIT)
        await batch_closed(client.index, index_location, sweep)
    _check_exactly_once(index_location, sweep, counts, results, server_kept=True)


@pytest.mark.timeout(240)
async def test_a_killed_process_s_sweep_resumes_over_stdio(tmp_path: Path, counts: Path) -> None:
    location = str(tmp_path / "index" / "tasks.sqlite3")
    argv = demo_argv("--count-arguments", str(counts), "--poll-interval", "100")
    sweep, _ = _run_and_be_killed(argv, location, tmp_path, counts, after=SIZE // 3)
    async with mtj.connect(argv, index=location, protocol_version="2025-11-25") as client:
        batch = await client.map("slow_compute", items(SIZE), limit=LIMIT, resume=True)
        assert batch.resumed is not None and batch.resumed.reattached == 0  # a new server process knows none
        results = await batch.gather(timeout=WAIT)
        await batch_closed(client.index, location, sweep)
    _check_exactly_once(location, sweep, counts, results, server_kept=False)


async def batch_closed(index: TaskIndex | None, location: str, sweep: str) -> None:
    assert index is not None
    index.flush()
    await eventually(lambda: run_sql(location, "SELECT finished_at FROM sweeps WHERE id = ?", (sweep,))[0][0])


def _resumer(
    tmp_path: Path, name: str, url: str, location: str, sweep: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """A process that resumes ``sweep`` by its id and prints its one line, then every label, in order, then
    what its view says of how the items came back."""
    script = tmp_path / f"{name}.py"
    script.write_text(
        "import asyncio\n"
        "import mcp_tasks_jupyter as mtj\n"
        "async def main():\n"
        f"    async with mtj.connect({url!r}, index={location!r}, protocol_version='2025-11-25') as c:\n"
        f"        b = await c.map('slow_compute', resume={sweep!r}, limit={LIMIT})\n"
        "        print(b.said, flush=True)\n"
        "        try:\n"
        f"            results = await b.gather(timeout={WAIT})\n"
        "        except TimeoutError:\n"
        "            print('pending', [(i, h.status, h.task_id) for i, h in enumerate(b) if not h.done()][:5])\n"
        "            raise\n"
        "        print(' '.join(r.structured['label'] for r in results), flush=True)\n"
        "        print(b.view().resumed, flush=True)\n"
        "asyncio.run(main())\n"
    )
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=python_env(env))


@pytest.mark.timeout(240)
async def test_two_processes_resuming_one_sweep_at_once_never_send_an_item_twice(
    demo_http: str, counts: Path, tmp_path: Path, index_location: str
) -> None:
    sweep, _ = _run_and_be_killed(demo_http, index_location, tmp_path, counts, after=SIZE // 4)
    first = _resumer(tmp_path, "first", demo_http, index_location, sweep)
    second = _resumer(tmp_path, "second", demo_http, index_location, sweep)
    ran = [process.communicate(timeout=WAIT * 2)[0] for process in (first, second)]
    assert (first.returncode, second.returncode) == (0, 0), ran
    outs = [out.splitlines() for out in ran]
    said = [out[0] for out in outs]
    assert all(line.startswith(f"resumed sweep {sweep}: ") for line in said), said
    # one of them took the dead process's items; the other followed them from the index
    assert sum("run by another kernel" in line for line in said) >= 1, said
    for out in outs:  # both bound every result, in order
        assert out[1].split() == [f"i{i}" for i in range(SIZE)]
    rows = sweep_rows(index_location, sweep)
    assert {r[1] for r in rows} == {"ended"}
    calls = calls_by_label(counts)
    noted = {f"i{r[0]}" for r in rows if r[5] is not None}
    assert all(calls[f"i{i}"] == 1 for i in range(SIZE) if f"i{i}" not in noted)
    assert all(calls[label] <= 2 for label in noted) and len(noted) <= LIMIT


@pytest.mark.timeout(240)
async def test_a_server_restarted_mid_sweep_that_lost_its_tasks(tmp_path: Path, counts: Path) -> None:
    """The server (HTTP) is killed and started again on its port while a sweep runs: the tasks it had are
    gone. The running batch ends those ``lost`` (its record keeps them sent); the resume asks the server,
    which no longer has them, and sends each once more, noted."""
    location = str(tmp_path / "index" / "tasks.sqlite3")
    argv = demo_argv(
        "--http",
        "--port",
        str(free_port()),
        "--count-arguments",
        str(counts),
        "--poll-interval",
        "100",
        python=PYTHON,
    )
    n = 300
    with spawn(argv, env=python_env()) as server:
        url = wait_for_stdout(server, LISTENING_LINE, START_TIMEOUT).group(1)
        async with mtj.connect(url, index=location, protocol_version="2025-11-25") as client:
            batch = await client.map("slow_compute", items(n, 0.5), limit=32)
            sweep = batch.sweep
            assert sweep is not None
            await eventually(lambda: len(counts.read_text().splitlines()) >= n // 3)
            os.killpg(server.popen.pid, signal.SIGKILL)
            server.popen.wait(10)
            with spawn(argv, env=python_env()) as again:
                wait_for_stdout(again, LISTENING_LINE, START_TIMEOUT)
                results = await batch.gather(return_exceptions=True, timeout=WAIT)
                lost = [i for i, r in enumerate(results) if isinstance(r, BaseException)]
                assert lost, "no task was lost with the server"
                assert {batch[i].status for i in lost} == {"lost"}, [results[i] for i in lost[:3]]
                async with mtj.connect(url, index=location, protocol_version="2025-11-25") as second:
                    resumed = await second.map("slow_compute", items(n, 0.5), limit=32, resume=True)
                    assert resumed.sweep == sweep and resumed.resumed is not None
                    # each lost one is sent again: as lost by the server, or as cut in its send (in doubt)
                    assert resumed.resumed.lost >= 1, resumed.said
                    results = await resumed.gather(timeout=WAIT)
                    await batch_closed(second.index, location, sweep)
    assert [r.structured["label"] for r in results] == [f"i{i}" for i in range(n)]
    rows = sweep_rows(location, sweep)
    calls = calls_by_label(counts)
    noted = {f"i{r[0]}": r[5] for r in rows if r[5] is not None}
    assert {f"i{i}" for i in lost} <= set(noted)
    assert all(calls[f"i{i}"] == 1 for i in range(n) if f"i{i}" not in noted)
    assert all(calls[label] == 2 for label, note in noted.items() if "no longer had" in note)
    assert all(calls[label] <= 2 for label in noted)
    # the export tells the same, item by item: each item's record names its sweep, its place and why it was
    # sent again (issue 33 item 5)
    exported = tmp_path / "sweep.jsonl"
    mtj.export(None, exported, index=TaskIndex(location))
    placed = {row["sweep_item"]: row for row in mtj.read_export(exported) if row["sweep"] == sweep}
    assert sorted(placed) == list(range(n))
    assert {f"i{i}": row["sent_again"] for i, row in placed.items() if row["sent_again"]} == noted
    assert all(row["arguments"]["label"] == f"i{i}" for i, row in placed.items())
    # and how the resume found each item, counted as its view counted them
    came = collections.Counter(row["came_back"] for row in placed.values())
    found = resumed.resumed
    assert dict(came) == {
        kind: n
        for kind, n in (
            ("before", found.before),
            ("reattached", found.reattached),
            ("lost", found.lost),
            ("in_doubt", found.in_doubt),
            ("fresh", found.fresh),
        )
        if n
    }


@pytest.mark.timeout(240)
async def test_followers_of_a_process_that_dies_take_its_items_over_once(
    demo_http: str, counts: Path, tmp_path: Path, index_location: str
) -> None:
    """Two processes resume a sweep while the process running it is alive: they follow its items from the
    index. It is SIGKILLed and left unreaped, so its pid still answers: only its heartbeat, older than the
    lease (``MTJ_SWEEP_LEASE``, 2 s here), tells it died. One follower then takes its items over (one
    conditional update) and sends what is left; the other follows that one. Each item reaches the server
    once, but those the record notes as sent again (at most the limit's worth, in flight at the kill)."""
    n, limit = 400, 16
    lease = {**os.environ, "MTJ_SWEEP_LEASE": "2"}
    script = tmp_path / "runner.py"
    script.write_text(
        "import asyncio\n"
        "import mcp_tasks_jupyter as mtj\n"
        "async def main():\n"
        f"    async with mtj.connect({demo_http!r}, index={index_location!r}, protocol_version='2025-11-25')"
        " as c:\n"
        f"        b = await c.map('slow_compute', {items(n, 0.5)!r}, limit={limit})\n"
        "        print('sweep', b.sweep, flush=True)\n"
        "        await b.gather()\n"
        "asyncio.run(main())\n"
    )
    runner = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=python_env(lease),
        start_new_session=True,
    )  # fmt: skip
    followers: list[subprocess.Popen[str]] = []
    try:
        assert runner.stdout is not None
        sweep = runner.stdout.readline().split()[1]
        followers = [_resumer(tmp_path, name, demo_http, index_location, sweep, lease) for name in ("b", "c")]
        said = []
        for follower in followers:
            assert follower.stdout is not None
            said.append(follower.stdout.readline().strip())
        # both came while the runner was alive: every item not ended is followed, none sent by them
        assert all(line.startswith(f"resumed sweep {sweep}: ") and "run by another kernel" in line
                   for line in said), said  # fmt: skip
        assert all("0 sent fresh" in line and "0 re-attached" in line for line in said), said
        await eventually(lambda: len(counts.read_text().splitlines()) >= n // 4)
        os.killpg(runner.pid, signal.SIGKILL)  # not reaped until the end: its pid stays
        outs = [follower.communicate(timeout=WAIT * 3)[0].splitlines() for follower in followers]
        assert [follower.returncode for follower in followers] == [0, 0], outs
    finally:
        for process in (runner, *followers):
            if process.poll() is None:
                process.kill()
            process.wait(10)
    for out in outs:  # both bound every result, in order
        assert out[0].split() == [f"i{i}" for i in range(n)]
    views = [out[1] for out in outs]
    taken = [view for view in views if "taken over from a kernel that stopped" in view]
    assert len(taken) == 1, views  # one took the items over; the other followed it
    rows = sweep_rows(index_location, sweep)
    assert {r[1] for r in rows} == {"ended"}
    calls = calls_by_label(counts)
    noted = {f"i{r[0]}": r[5] for r in rows if r[5] is not None}
    assert all(calls[f"i{i}"] == 1 for i in range(n) if f"i{i}" not in noted), calls
    assert all(calls[label] <= 2 for label in noted) and len(noted) <= limit, noted
    assert all("in flight" in note for note in noted.values()), noted  # the server kept its tasks


@pytest.mark.timeout(240)
async def test_a_runner_taken_for_dead_while_alive_stops_sending_and_follows(
    demo_http: str, counts: Path, tmp_path: Path, index_location: str
) -> None:
    """A runner whose heartbeat is slow (its lease 40 s: a beat every 5 s) is taken for dead by a follower
    with a short lease (1 s) while it still runs: the follower takes its items over; the runner's claims of
    its next items fail from then on (as its next heartbeat would tell it), so it follows them from the
    index instead of sending them. Both bind every result in order; each item reaches the server once, but
    those noted as sent again (claimed by the runner before its items moved, at most the limit's worth)."""
    n, limit = 300, 16
    script = tmp_path / "slow_beat.py"
    script.write_text(
        "import asyncio\n"
        "import mcp_tasks_jupyter as mtj\n"
        "async def main():\n"
        f"    async with mtj.connect({demo_http!r}, index={index_location!r}, protocol_version='2025-11-25')"
        " as c:\n"
        f"        b = await c.map('slow_compute', {items(n, 0.3)!r}, limit={limit})\n"
        "        print('sweep', b.sweep, flush=True)\n"
        f"        results = await b.gather(timeout={WAIT * 2})\n"
        "        print(' '.join(r.structured['label'] for r in results), flush=True)\n"
        "asyncio.run(main())\n"
    )
    runner = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
        env=python_env({**os.environ, "MTJ_SWEEP_LEASE": "40"}),
    )  # fmt: skip
    follower: subprocess.Popen[str] | None = None
    try:
        assert runner.stdout is not None
        sweep = runner.stdout.readline().split()[1]
        await eventually(lambda: len(counts.read_text().splitlines()) >= limit)
        follower = _resumer(
            tmp_path, "quick", demo_http, index_location, sweep, {**os.environ, "MTJ_SWEEP_LEASE": "1"}
        )
        outs = [process.communicate(timeout=WAIT * 3)[0].splitlines() for process in (runner, follower)]
        assert [runner.returncode, follower.returncode] == [0, 0], outs
    finally:
        for process in (runner, follower):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(10)
    labels = [f"i{i}" for i in range(n)]
    assert outs[0][0].split() == labels and outs[1][1].split() == labels
    rows = sweep_rows(index_location, sweep)
    assert {r[1] for r in rows} == {"ended"}
    calls = calls_by_label(counts)
    noted = {f"i{r[0]}": r[5] for r in rows if r[5] is not None}
    assert all(calls[label] == 1 for label in labels if label not in noted), calls
    assert all(calls[label] <= 2 for label in noted) and len(noted) <= limit, noted


async def test_a_sweep_the_index_cannot_record_goes_on_unrecorded(
    demo_http: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index refuses the sweep's record (here a trigger): the batch goes on unrecorded and ends; its
    heartbeats, which find no row of it, never make it take itself for taken over (it would then wait
    for another kernel forever)."""
    from mcp_tasks_jupyter.index import sweeps as store

    monkeypatch.setattr(store, "HEARTBEAT_S", 0.05)
    location = str(tmp_path / "index" / "tasks.sqlite3")
    TaskIndex(location).records()  # made, with its tables
    run_sql(
        location,
        "CREATE TRIGGER no_sweeps BEFORE INSERT ON sweeps BEGIN SELECT RAISE(ABORT, 'no sweeps here'); END",
    )
    async with mtj.connect(demo_http, index=location, protocol_version="2025-11-25") as client:
        batch = await client.map("slow_compute", items(24, 0.1), limit=4)
        results = await batch.gather(timeout=WAIT)
        assert [r.structured["label"] for r in results] == [f"i{i}" for i in range(24)]
        assert batch.sweep is None  # not recorded, and said so
