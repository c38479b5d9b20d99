"""Schema version 8 (issue 33 item 5): a version 7 index's sweep items gain ``came_back`` (how a resume found
each item, which the export tells), on SQLite and on PostgreSQL (the tests' own server, ``conftest.py``); the
items recorded before keep everything else."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mcp_tasks_jupyter.index import sweeps
from mcp_tasks_jupyter.index.database import SCHEMA
from mcp_tasks_jupyter.index.postgres import SCHEMA as POSTGRES_SCHEMA
from mcp_tasks_jupyter.index.task_index import SCHEMA_VERSION, TaskIndex
from tests.support.postgres import PostgresServer, run_sql

pytestmark = pytest.mark.loopback

ITEM = (
    "INSERT INTO sweep_items (sweep, position, arguments, args_key, state, sends, updated_at) "
    "VALUES ('s1', 0, '{}', 'k', 'queued', 0, 1)"
)


def _version_7(schema: str) -> str:
    old = schema.replace(",\n    came_back TEXT", "")
    assert "came_back" not in old
    return old


def _came_back_written(index: TaskIndex) -> list[sweeps.ItemRow]:
    store = sweeps.SweepStore(index.location, index.describe())
    try:
        store.now(sweeps.came_back, "s1", {"fresh": [0]})
        return store.now(sweeps.items, "s1")
    finally:
        store.close()


def test_a_version_7_sqlite_index_gains_came_back(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(_version_7(SCHEMA))
    db.execute(ITEM)
    db.execute("PRAGMA user_version = 7")
    db.commit()
    db.close()
    index = TaskIndex(path)
    index.records()  # opened: migrated
    [item] = _came_back_written(index)
    assert (item.position, item.state, item.came_back) == (0, "queued", "fresh")
    index.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 8


def test_a_version_7_postgres_index_gains_came_back(postgres_server: PostgresServer) -> None:
    url = postgres_server.database()
    postgres_server.psql(
        f"SET ROLE team; {_version_7(POSTGRES_SCHEMA)}; INSERT INTO mtj_schema VALUES (7); {ITEM};",
        database=url.rsplit("/", 1)[1],
    )
    index = TaskIndex(url)
    index.records()
    [item] = _came_back_written(index)
    assert (item.position, item.state, item.came_back) == (0, "queued", "fresh")
    index.close()
    assert run_sql(url, "SELECT version FROM mtj_schema") == [(SCHEMA_VERSION,)]
