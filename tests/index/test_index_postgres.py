"""A team's task index on PostgreSQL (issue 22), against a real server (tests/support/postgres.py): an outage
in the middle of a run loses no record, the team's key makes the same call on another machine a cache hit,
the schema migrates, a machine's SQLite index is copied in once, and the password is never shown.

The record logic itself runs on both backends in test_index.py, test_cli.py, test_true_outcomes.py and
test_frames_and_provenance.py (the ``index_location`` and ``index_env`` fixtures)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index import writes as index_writes
from mcp_tasks_jupyter.index.task_index import SCHEMA_VERSION, ServerIdentity, TaskIndex
from tests.support import eventually, start_demo_http
from tests.support.postgres import PostgresServer, run_sql
from tests.support.processes import free_port, python_env

pytestmark = pytest.mark.loopback

WAIT = 30.0
DEMO = ServerIdentity("demo", "http://127.0.0.1:1/mcp", "http", "2025-11-25", "2025-11-25")


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the test's own (it is stopped and started again mid-test)."""
    with PostgresServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("MTJ_INDEX_KEY", raising=False)
    monkeypatch.delenv("MTJ_INDEX_KEY_FILE", raising=False)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_tasks_jupyter", *args],
        capture_output=True,
        text=True,
        env=python_env(env),
        timeout=120,
        check=False,
    )


# -- outages ---------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_the_database_stopped_and_started_mid_run_loses_no_record(
    own_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = own_server.database()
    index = TaskIndex(url)
    index.check()
    with (
        start_demo_http("--poll-interval", "100") as demo,
        caplog.at_level(logging.INFO, logger="mcp_tasks_jupyter"),
    ):
        async with mtj.connect(demo, protocol_version="2025-11-25", index=index) as client:
            before = await client.start_task("slow_compute", {"seconds": 0.1, "steps": 1, "label": "before"})
            await asyncio.wait_for(before, WAIT)
            await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the first record written")
            own_server.stop()
            # Tasks go on while the database is away: started, progressing and finished, all recorded later.
            during = [
                await client.start_task("slow_compute", {"seconds": 0.3, "steps": 3, "label": f"during-{i}"})
                for i in range(5)
            ]
            await asyncio.wait_for(asyncio.gather(*during), WAIT)
            await eventually(lambda: index.pending() == 5, timeout=WAIT, what="the records kept")
            assert index.records() == []  # a read on the loop does not wait on a database known to be away
            own_server.start()
            await eventually(lambda: index.pending() == 0, timeout=WAIT, what="the kept records written")
            # Away again, and back just before the client closes: close writes what is kept.
            own_server.stop()
            last = await client.start_task("slow_compute", {"seconds": 0.1, "steps": 1, "label": "last"})
            await asyncio.wait_for(last, WAIT)
            await eventually(lambda: index.pending() == 1, timeout=WAIT, what="the last record kept")
            own_server.start()
        index.close()
    records = TaskIndex(url).records()
    assert [r.arguments["label"] for r in records] == ["before", *(f"during-{i}" for i in range(5)), "last"]
    assert all(r.status == "completed" and r.result is not None for r in records)
    away = [r.getMessage() for r in caplog.records if "cannot be reached" in r.getMessage()]
    back = [r.getMessage() for r in caplog.records if "can be reached again" in r.getMessage()]
    assert len(away) == 2 and len(back) == 2, [r.getMessage() for r in caplog.records]  # once per outage
    assert f"at most {index_writes.MAX_PENDING_ROWS} rows" in away[0] and "127.0.0.1" in away[0]
    assert own_server.password not in caplog.text


def test_records_kept_while_away_are_bounded_and_the_oldest_given_up(
    own_server: PostgresServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(index_writes, "MAX_PENDING_ROWS", 2)
    monkeypatch.setattr(index_writes, "BLOCKING_BUSY_TIMEOUT_MS", 100)
    url = own_server.database()
    index = TaskIndex(url)
    index.check()
    own_server.stop()
    with caplog.at_level(logging.WARNING, logger="mcp_tasks_jupyter"):
        rows = [index.add(DEMO, "slow_compute", {"i": i}, task_id=f"b{i}") for i in range(3)]
        assert None not in rows and index.pending() == 2
        own_server.start()
        index.close()
    assert any("gave up 1 change" in r.getMessage() and "(task b0)" in r.getMessage() for r in caplog.records)
    assert [r.task_id for r in TaskIndex(url).records()] == ["b1", "b2"]


def test_records_still_unwritten_when_the_index_closes_are_written_by_the_next_process(
    own_server: PostgresServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setattr(index_writes, "BLOCKING_BUSY_TIMEOUT_MS", 100)
    url = own_server.database()
    index = TaskIndex(url)
    index.check()
    before = index.add(DEMO, "slow_compute", {"i": 0}, task_id="u0")
    assert before is not None and index.pending() == 0
    own_server.stop()
    with caplog.at_level(logging.WARNING, logger="mcp_tasks_jupyter"):
        later = index.add(DEMO, "slow_compute", {"i": 1}, task_id="u1")
        assert later is not None
        index.update(before, task_id="u0", status="completed", status_message=None, result={"content": []})
        index.close()  # as at a kernel's exit: the database is still away
    [kept] = (tmp_path / "data" / "mcp-tasks-jupyter" / "unwritten").glob("*.jsonl")
    assert kept.stat().st_mode & 0o777 == 0o600
    assert own_server.password not in kept.read_text() and own_server.password not in caplog.text
    said = [r.getMessage() for r in caplog.records if "kept in" in r.getMessage()]
    assert len(said) == 1 and "2 record change(s)" in said[0], caplog.text
    assert not any("gave up" in r.getMessage() for r in caplog.records)
    own_server.start()
    records = {r.task_id: r for r in TaskIndex(url).records()}  # the next process to open it
    assert set(records) == {"u0", "u1"} and records["u0"].status == "completed"
    assert not list(kept.parent.iterdir())  # written, so no longer kept
    assert {r.task_id for r in TaskIndex(url).records()} == {"u0", "u1"}  # each once


# -- the team's cache --------------------------------------------------------------------------------

MACHINE = """
import asyncio, json, os, sys
import mcp_tasks_jupyter as mtj

async def main():
    async with mtj.connect(sys.argv[1], protocol_version="2025-11-25", index=os.environ["MTJ_INDEX"]) as client:
        sent = []
        send = client.transport.send
        async def counted(message, headers=None):
            sent.append(message.get("method"))
            await send(message, headers)
        client.transport.send = counted
        args = {"seconds": 0.2, "steps": 2, "label": "shared"}
        handle = await client.start_task("slow_compute", args, cache=True)
        result = await asyncio.wait_for(handle, 30)
        print(json.dumps({"cached": handle.cached, "sent": sent, "label": result.structured["label"]}))

asyncio.run(main())
"""


def _machine(home: Path, url: str, demo: str, **env: str) -> tuple[dict[str, object], str]:
    """One "machine": a process with a home and data directory of its own, on the team's index."""
    environment = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "MTJ_INDEX": url,
        **env,
    }
    done = subprocess.run(
        [sys.executable, "-c", MACHINE, demo],
        capture_output=True,
        text=True,
        env=python_env(environment),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.mark.timeout(240)
def test_the_team_key_makes_another_machines_call_a_cache_hit(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.database()
    team = secrets.token_hex(32)
    key_file = tmp_path / "team.key"
    key_file.write_text(team + "\n")
    key_file.chmod(0o600)
    with start_demo_http("--poll-interval", "100") as demo:
        first, _ = _machine(tmp_path / "a", url, demo, MTJ_INDEX_KEY=team)
        assert first["cached"] is False and "tools/call" in first["sent"]  # type: ignore[operator]
        hit, _ = _machine(tmp_path / "b", url, demo, MTJ_INDEX_KEY_FILE=str(key_file))
        assert hit["cached"] is True and hit["label"] == "shared", (hit, _)
        assert hit["sent"] == [], hit  # the hit reached no server
        alone, said = _machine(tmp_path / "c", url, demo)  # no team key: its own, and one line says why
        assert alone["cached"] is False and "tools/call" in alone["sent"]  # type: ignore[operator]
        assert said.count("never cache hits") == 1 and "MTJ_INDEX_KEY" in said, said
        key_file.chmod(0o644)
        loose, said = _machine(tmp_path / "d", url, demo, MTJ_INDEX_KEY_FILE=str(key_file))
        assert loose["cached"] is False and "chmod 600" in said, said
    assert postgres_server.password not in said
    records = TaskIndex(url).records()
    assert len(records) == 3  # a, c and d ran it; the hit (b) made no record of its own
    # A fifth home sees everyone's tasks in mcp-tasks list and exports one provenance file of them all.
    elsewhere = {"HOME": str(tmp_path / "e"), "XDG_DATA_HOME": str(tmp_path / "e" / "data"), "MTJ_INDEX": url}
    listed = cli("list", env=elsewhere)
    assert listed.returncode == 0 and listed.stdout.count("slow_compute") == 3, listed.stdout + listed.stderr
    exported = cli("export", str(tmp_path / "team.jsonl"), env=elsewhere)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in (tmp_path / "team.jsonl").read_text().splitlines()]
    assert sorted(row["record"] for row in rows) == sorted(r.id for r in records)
    assert postgres_server.password not in listed.stdout + exported.stdout + (tmp_path / "team.jsonl").read_text()


# -- schema versions, copying a machine's index in -------------------------------------------------

VERSION_3 = """
CREATE TABLE tasks (
    id BIGINT PRIMARY KEY, server_name TEXT NOT NULL, target TEXT NOT NULL, transport TEXT, protocol TEXT,
    dialect TEXT, tool TEXT NOT NULL, arguments TEXT NOT NULL, args_key TEXT NOT NULL, task_id TEXT,
    notebook TEXT, out_var TEXT, created_at TEXT, ttl_ms BIGINT, status TEXT NOT NULL, status_message TEXT,
    result TEXT, recorded_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
    server_software TEXT, server_version TEXT, started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION,
    questions TEXT, error TEXT);
CREATE TABLE mtj_schema (version INTEGER NOT NULL);
INSERT INTO mtj_schema VALUES (3);
INSERT INTO tasks (id, server_name, target, tool, arguments, args_key, status, result, recorded_at, updated_at)
    VALUES (1, 'demo', 'x', 'failing_job', '{}', 'k', 'completed', '{"content":[],"isError":true}', 1, 1),
           (2, 'demo', 'x', 'slow_compute', '{}', 'k', 'completed', '{"content":[]}', 2, 2);
"""


def test_an_older_schema_on_postgresql_is_migrated(postgres_server: PostgresServer) -> None:
    url = postgres_server.database()
    database = url.rsplit("/", 1)[1]
    postgres_server.psql(f"SET ROLE team; {VERSION_3}", database=database)
    records = {r.id: r for r in TaskIndex(url).records()}
    assert (records[1].status, records[1].server_status) == ("error", "completed")
    assert (records[2].status, records[2].server_status) == ("completed", "completed")
    assert records[1].author is None  # version 5's column, empty for older rows
    assert run_sql(url, "SELECT version FROM mtj_schema") == [(SCHEMA_VERSION,)]
    TaskIndex(url).records()  # opened again: nothing more to do
    assert run_sql(url, "SELECT COUNT(*) FROM mtj_schema") == [(1,)]


def test_a_machines_sqlite_index_is_copied_in_once(postgres_server: PostgresServer, tmp_path: Path) -> None:
    url = postgres_server.database()
    local = TaskIndex(tmp_path / "laptop" / "tasks.sqlite3")
    whole = local.add(DEMO, "slow_compute", {"seconds": 1})
    secret = local.add(DEMO, "slow_compute", {"seconds": 1, "api_token": "tok-123456"})
    assert whole is not None and secret is not None
    for row in (whole, secret):
        local.update(row, task_id=f"t{row}", status="completed", status_message=None, result={"content": []})
    local.close()
    team = secrets.token_hex(32)
    env = {**os.environ, "MTJ_INDEX": url, "MTJ_INDEX_KEY": team}
    first = cli("copy", str(local.path), env=env)
    assert first.returncode == 0 and first.stdout.startswith("copied 2 task records from "), first
    again = cli("copy", str(local.path), env=env)
    assert again.stdout.startswith("copied 0 task records") and "(2 already there)" in again.stdout, again
    assert postgres_server.password not in first.stdout + first.stderr + again.stdout + again.stderr
    team_index = TaskIndex(url)
    assert sorted(r.id for r in team_index.records()) == sorted([whole, secret])
    os.environ["MTJ_INDEX_KEY"] = team
    try:
        # the whole call is a cache hit for the team (its key made again under the team's); the one with a
        # redacted secret cannot be (its secret is not stored)
        assert team_index.cached(DEMO.target, "slow_compute", {"seconds": 1}) is not None
        assert team_index.cached(DEMO.target, "slow_compute", {"seconds": 1, "api_token": "tok-123456"}) is None
    finally:
        del os.environ["MTJ_INDEX_KEY"]
    missing = cli("copy", str(tmp_path / "nothing.sqlite3"), env=env)
    assert missing.returncode == 1 and "there is no SQLite index at" in missing.stderr


# -- secrets and sign-in -------------------------------------------------------------------------------


def test_a_wrong_password_is_an_error_naming_the_host_and_database(
    postgres_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = postgres_server.database()
    database = url.rsplit("/", 1)[1]
    wrong = postgres_server.url(database, password="wrong-secret-77")
    index = TaskIndex(wrong)
    with pytest.raises(mtj.ConnectionFailed) as raised:
        index.check()
    said = str(raised.value)
    assert "127.0.0.1" in said and database in said and "refused the sign-in" in said
    assert "wrong-secret-77" not in said and "wrong-secret-77" not in repr(index) + index.describe()
    with caplog.at_level(logging.WARNING, logger="mcp_tasks_jupyter"):
        index.add(DEMO, "slow_compute", {})
        index.close()
    assert (
        database in caplog.text and "refused the sign-in" in caplog.text and "wrong-secret-77" not in caplog.text
    )
    done = cli("list", env={**os.environ, "MTJ_INDEX": wrong})
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done
    assert "127.0.0.1" in done.stderr and database in done.stderr and "wrong-secret-77" not in done.stderr


def test_a_server_that_cannot_be_reached_is_said_in_one_line() -> None:
    url = f"postgresql://team:unreached-pw-55@127.0.0.1:{free_port()}/tasks"
    done = cli("list", env={**os.environ, "MTJ_INDEX": url})
    assert done.returncode == 1 and done.stderr.startswith("mcp-tasks: ") and done.stderr.count("\n") == 1, done
    assert "127.0.0.1" in done.stderr and "tasks" in done.stderr and "unreached-pw-55" not in done.stderr


@pytest.mark.anyio
async def test_the_password_is_never_shown_or_stored(
    postgres_server: PostgresServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = postgres_server.database()
    monkeypatch.setenv("MTJ_INDEX", url)
    with start_demo_http("--poll-interval", "100") as demo, caplog.at_level(logging.DEBUG):
        async with mtj.connect(demo, protocol_version="2025-11-25", index=url) as client:
            handle = await client.start_task("slow_compute", {"seconds": 0.1, "steps": 1})
            await asyncio.wait_for(handle, WAIT)
            shown = repr(client.index) + client.index.describe() + repr(client.describe())  # type: ignore[union-attr]
            exported = tmp_path / "provenance.jsonl"
            assert mtj.export([handle], exported) == 1
    password = postgres_server.password
    assert password not in shown and password not in exported.read_text() and password not in caplog.text
    assert password not in repr(run_sql(url, "SELECT * FROM tasks"))
