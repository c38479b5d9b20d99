"""The task index: its schema, redaction, concurrent writers, and what the client records in it
(resume after a lost connection, the result cache)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index.database import SCHEMA
from mcp_tasks_jupyter.index.task_index import SCHEMA_VERSION, ServerIdentity, TaskIndex
from mcp_tasks_jupyter.redact import REDACTED, redact_arguments
from mcp_tasks_jupyter.views.text import summary_line
from mcp_tasks_jupyter.views.view import view_of
from tests.support import start_demo_http
from tests.support.postgres import run_sql
from tests.support.processes import python_env

WAIT = 20  # seconds: a bound on every wait
DEMO = ServerIdentity("demo", "http://127.0.0.1:1/mcp", "http", "2025-11-25", "2025-11-25")


def stored_text(location: str) -> bytes:
    """Everything the index at ``location`` holds, as bytes: its files, or its database's rows."""
    if "://" not in location:
        return b"".join(p.read_bytes() for p in Path(location).parent.iterdir())
    return repr(run_sql(location, "SELECT * FROM tasks")).encode()


def test_schema_and_database_settings(index_location: str) -> None:
    index = TaskIndex(index_location)
    row = index.add(DEMO, "slow_compute", {"seconds": 2}, task_id="t1", ttl_ms=60000, notebook="a.ipynb")
    assert row is not None
    if index.path is not None:
        db = sqlite3.connect(index.path)
        columns = {r[1] for r in db.execute("PRAGMA table_info(tasks)")}
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 5
    else:
        columns = {
            str(name)
            for (name,) in run_sql(
                index_location, "SELECT column_name FROM information_schema.columns WHERE table_name = 'tasks'"
            )
        }
        assert run_sql(index_location, "SELECT version FROM mtj_schema") == [(SCHEMA_VERSION,)]
    assert {
        "server_name",
        "target",
        "protocol",
        "dialect",
        "tool",
        "arguments",
        "task_id",
        "notebook",
        "out_var",
        "created_at",
        "ttl_ms",
        "status",
        "status_message",
        "result",
        "username",
        "hostname",
        "server_status",
        "author",
    } <= columns
    record = index.get(row)
    assert record is not None and (record.tool, record.task_id, record.status, record.ttl_ms) == (
        "slow_compute",
        "t1",
        "working",
        60000,
    )
    assert [r.id for r in index.unfinished(DEMO.target, "a.ipynb")] == [row]
    assert index.unfinished(DEMO.target, None) == []
    index.update(row, task_id="t1", status="completed", status_message=None, result={"content": []})
    assert index.unfinished(DEMO.target, "a.ipynb") == []
    assert index.cached(DEMO.target, "slow_compute", {"seconds": 2}).id == row  # type: ignore[union-attr]
    assert index.cached(DEMO.target, "slow_compute", {"seconds": 3}) is None
    assert [r.id for r in index.clear(DEMO.target)] == [row] and index.records() == []


def test_the_person_who_named_themselves_is_on_every_record(
    index_location: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    monkeypatch.delenv("MTJ_AUTHOR", raising=False)
    index = TaskIndex(index_location)
    nobody = index.add(DEMO, "slow_compute", {"seconds": 1})
    mtj.set_author(
        "Josiah  Carberry", orcid="https://orcid.org/0000-0002-1825-0097", affiliation="Brown University"
    )
    try:
        named = index.add(DEMO, "slow_compute", {"seconds": 2})
    finally:
        mtj.set_author()
    assert nobody is not None and named is not None
    without, given = index.get(nobody), index.get(named)
    assert without is not None and without.author is None and without.username  # the login name, as before
    assert given is not None and given.author == mtj.Author(
        "Josiah Carberry", "0000-0002-1825-0097", "Brown University"
    )
    assert given.author.orcid_url == "https://orcid.org/0000-0002-1825-0097"


def test_an_index_of_version_4_gains_the_author_column(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA.replace(",\n    author TEXT", "").split("CREATE INDEX")[0])
    db.execute(
        "INSERT INTO tasks (id, server_name, target, tool, arguments, args_key, status, recorded_at, updated_at, "
        "username) VALUES (7, 'demo', 'x', 'slow_compute', '{}', 'k', 'completed', 1, 1, 'ada')"
    )
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    [record] = TaskIndex(path).records()
    assert (record.id, record.username, record.author) == (7, "ada", None)
    db = sqlite3.connect(path)
    assert "author" in {r[1] for r in db.execute("PRAGMA table_info(tasks)")}
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_secret_argument_values_are_never_written(index_location: str) -> None:
    arguments = {
        "topic": "tides",
        "api_key": "k-123456",
        "Authorization": "Bearer abcdef",
        "nested": {"password": "hunter22", "depth": 2},
        "items": [{"token": "t-98765"}],
        "client_secret": "s-55555",
    }
    assert redact_arguments(arguments) == {
        "topic": "tides",
        "api_key": REDACTED,
        "Authorization": REDACTED,
        "nested": {"password": REDACTED, "depth": 2},
        "items": [{"token": REDACTED}],
        "client_secret": REDACTED,
    }
    index = TaskIndex(index_location)
    row = index.add(DEMO, "research", arguments)
    assert row is not None and index.get(row).arguments["topic"] == "tides"  # type: ignore[union-attr]
    index.close()
    raw = stored_text(index_location)
    assert b"tides" in raw
    for secret in (b"k-123456", b"abcdef", b"hunter22", b"t-98765", b"s-55555"):
        assert secret not in raw
    # different secrets are different calls for the cache, without storing them
    assert index.arguments_key({"token": "a"}) != index.arguments_key({"token": "b"})


WRITER = """
import sys
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex
index = TaskIndex(sys.argv[1])
who = sys.argv[2]
identity = ServerIdentity("demo", "http://x/mcp")
for i in range(150):
    row = index.add(identity, "slow_compute", {"i": i, "who": who}, task_id=f"{who}-{i}")
    assert row is not None
    index.update(row, task_id=f"{who}-{i}", status="completed", status_message="done", result={"i": i})
print("ok")
"""


@pytest.mark.timeout(180)
def test_many_processes_writing_at_once(index_location: str) -> None:
    TaskIndex(index_location).records()  # create it first: the writers then race only on rows
    who = ("a", "b", "c", "d")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, index_location, name],
            env=python_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in who
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=150)
        assert writer.returncode == 0 and out.strip() == b"ok", err.decode()
    if "://" not in index_location:
        assert sqlite3.connect(index_location).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert run_sql(
        index_location,
        "SELECT COUNT(*), COUNT(DISTINCT task_id) FROM tasks WHERE status = 'completed' AND result IS NOT NULL",
    ) == [(150 * len(who), 150 * len(who))]


class Counting:
    """Counts every message the client sends to the server."""

    def __init__(self, client: mtj.Client) -> None:
        self.sent: list[str] = []
        transport = client.transport
        send = transport.send

        async def counted(message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self.sent.append(str(message.get("method")))
            await send(message, headers)

        transport.send = counted  # type: ignore[method-assign]


@pytest.mark.anyio
async def test_client_records_its_tasks_and_cache_hits_ask_no_server(index_location: str) -> None:
    index = TaskIndex(index_location)
    updates: list[str] = []
    update = index.update
    index.update = lambda row, **kw: (updates.append(kw["status"]), update(row, **kw))[1]  # type: ignore
    with start_demo_http("--poll-interval", "100") as url:
        async with mtj.connect(
            url, protocol_version="2025-11-25", index=index, headers={"X-Api-Key": "header-secret-42"}
        ) as client:
            args = {"seconds": 0.6, "steps": 12, "label": "cached"}
            first = await client.start_task("slow_compute", args, cache=True)  # nothing stored yet: runs
            changes: list[Any] = []
            states: set[Any] = set()
            first.on_change(lambda h: (changes.append(1), states.add((h.status, h.status_message, h.done()))))
            result = await asyncio.wait_for(first, WAIT)
            assert not first.cached and result.structured["label"] == "cached"
            # written when the status or its message changes and at the end, not on every change
            # (progress ticks, log lines)
            assert len(updates) <= len(states) + 2 < len(changes), (updates, len(changes))
            [record] = index.records()
            assert (record.server_name, record.target, record.tool, record.task_id, record.status) == (
                client.name,
                url,
                "slow_compute",
                first.task_id,
                "completed",
            )
            assert record.result == result.raw and record.arguments == args
            counting = Counting(client)
            again = await client.start_task("slow_compute", dict(args), cache=True)
            assert again.done() and again.cached and counting.sent == []
            assert again.result().structured == result.structured
            assert "(cached)" in repr(again) or "cached" in summary_line(view_of(again))
            fresh = await client.start_task("slow_compute", args)  # not asked: never cached
            assert not fresh.cached and "tools/call" in counting.sent
            await asyncio.wait_for(fresh, WAIT)
            assert len(index.records()) == 2  # the cache hit made no record of its own
    index.close()
    raw = stored_text(index_location)
    assert b"slow_compute" in raw and b"header-secret-42" not in raw


@pytest.mark.anyio
async def test_resume_picks_up_unfinished_tasks_and_marks_unknown_ones_lost(index_location: str) -> None:
    index = TaskIndex(index_location)
    with start_demo_http("--poll-interval", "100") as url:
        async with mtj.connect(url, protocol_version="2025-11-25", index=index) as client:
            started = await client.start_task("slow_compute", {"seconds": 1.5, "steps": 3, "label": "kept"})
            task_id = started.task_id
        # the connection closed with the task running; a bogus record stands for one the server forgot
        bogus = index.add(ServerIdentity("demo", url), "slow_compute", {}, task_id="no-such-task")
        async with mtj.connect(url, protocol_version="2025-11-25", index=index) as client:
            handles = client.resume()
            assert sorted(h.task_id for h in handles) == sorted([task_id, "no-such-task"])
            resumed = next(h for h in handles if h.task_id == task_id)
            gone = next(h for h in handles if h.task_id == "no-such-task")
            assert (await asyncio.wait_for(resumed, WAIT)).structured["label"] == "kept"
            with pytest.raises(mtj.TaskNotFound):
                await asyncio.wait_for(gone, WAIT)
            assert gone.status == "lost"
            assert client.resume() == []  # nothing unfinished is left
    by_id = {r.task_id: r for r in index.records()}
    assert by_id[task_id].status == "completed" and by_id[task_id].result is not None
    lost = by_id["no-such-task"]
    assert lost.status == "lost" and "no longer knows" in (lost.status_message or "")
    assert index.get(bogus) is not None
