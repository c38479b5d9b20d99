"""Schema version 7 (MCP Apps views, issue 32 item 6) on PostgreSQL: a version 6 database gains the view
columns, the records keep them, and copying a machine's SQLite index in carries them (``copy.py`` copies
every column of ``database.COLUMNS``). The server is started by the tests' own fixture (``conftest.py``)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from mcp_tasks_jupyter.index.postgres import SCHEMA as POSTGRES_SCHEMA
from mcp_tasks_jupyter.index.task_index import SCHEMA_VERSION, ServerIdentity, TaskIndex
from mcp_tasks_jupyter.index.view_record import StartedBy, ViewRecord, view_call
from tests.support.postgres import PostgresServer, run_sql

pytestmark = pytest.mark.loopback

DEMO = ServerIdentity("demo", "http://127.0.0.1:1/mcp", "http", "2025-11-25", "2025-11-25")
VIEW = ViewRecord("ui://demo/live-chart.html").with_call(
    view_call("tools/call", name="steer_chart", arguments={"action": "stop", "token": "tok-987654"})
)


def test_a_version_6_database_gains_the_view_columns(postgres_server: PostgresServer) -> None:
    url = postgres_server.database()
    database = url.rsplit("/", 1)[1]
    version_6 = POSTGRES_SCHEMA.replace(",\n    app_view TEXT", "").replace(",\n    started_by TEXT", "")
    assert "app_view" not in version_6 and "started_by" not in version_6
    postgres_server.psql(
        f"SET ROLE team; {version_6}; INSERT INTO mtj_schema VALUES (6); "
        "INSERT INTO tasks (id, server_name, target, tool, arguments, args_key, status, recorded_at, updated_at) "
        "VALUES (7, 'demo', 'x', 'live_chart', '{}', 'k', 'completed', 1, 1);",
        database=database,
    )
    index = TaskIndex(url)
    [old] = index.records()
    assert (old.id, old.app_view, old.started_by) == (7, None, None)  # empty for older rows
    assert run_sql(url, "SELECT version FROM mtj_schema") == [(SCHEMA_VERSION,)] and SCHEMA_VERSION >= 7
    row = index.add(DEMO, "steer_chart", {"action": "stop"})
    assert row is not None
    started = StartedBy("ui://demo/live-chart.html", "live_chart", 7, "t-1")
    index.note_view(7, app_view=VIEW)
    index.note_view(row, started_by=started)
    index.flush()
    records = {r.id: r for r in TaskIndex(url).records()}
    assert records[7].app_view == VIEW and records[row].started_by == started
    assert records[7].app_view.calls[0]["arguments"] == {"action": "stop", "token": "<redacted>"}
    assert "tok-987654" not in str(run_sql(url, "SELECT app_view, started_by FROM tasks"))
    index.close()


def test_copying_a_machines_index_keeps_its_views(postgres_server: PostgresServer, tmp_path: Path) -> None:
    url = postgres_server.database()
    local = TaskIndex(tmp_path / "laptop" / "tasks.sqlite3")
    viewed = local.add(DEMO, "live_chart", {"points": 3})
    started = local.add(DEMO, "steer_chart", {"action": "stop"})
    assert viewed is not None and started is not None
    local.note_view(viewed, app_view=VIEW)
    local.note_view(started, started_by=StartedBy(VIEW.uri, "live_chart", viewed, None))
    local.flush()
    team = TaskIndex(url)
    os.environ["MTJ_INDEX_KEY"] = secrets.token_hex(32)
    try:
        assert team.copy_from(local) == (2, 0)
    finally:
        del os.environ["MTJ_INDEX_KEY"]
    records = {r.id: r for r in team.records()}
    assert records[viewed].app_view == VIEW and records[viewed].started_by is None
    assert records[started].started_by == StartedBy(VIEW.uri, "live_chart", viewed, None)
    local.close()
    team.close()
