"""What a study keeps of an MCP Apps view (issue 32 items 4 and 6): the task's record in the index names the
view's resource URI and what the view called (tools/call, resources/read, open-link asked: names, times,
outcomes, arguments redacted, bounded), a task a view started is marked as started by it, and the exports
(``mcp-tasks show``/``list``, JSON Lines, CSV, the DataFrame) carry both; no registered secret reaches them.
Schema version 7 on SQLite (PostgreSQL: ``tests/index/test_index_postgres.py``)."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import time
from pathlib import Path

import pytest

from mcp_tasks_jupyter.demo.app_tools import VIEW_URI
from mcp_tasks_jupyter.exports import cli
from mcp_tasks_jupyter.exports.frames import tasks_frame
from mcp_tasks_jupyter.exports.provenance import provenance_row, read_export, rows, write
from mcp_tasks_jupyter.index.database import SCHEMA, SCHEMA_VERSION
from mcp_tasks_jupyter.index.task_index import TaskIndex
from mcp_tasks_jupyter.index.view_record import (
    MAX_ARGUMENTS_CHARS,
    MAX_CALLS,
    StartedBy,
    ViewRecord,
    link_url,
    view_call,
)
from mcp_tasks_jupyter.jupyter.widgets.app_widget import app_view
from mcp_tasks_jupyter.redact import MARKER, register
from tests.apps.test_app_widget import answers, from_browser
from tests.jupyter.conftest import UpdateCounter, demo_client
from tests.support import eventually

pytestmark = pytest.mark.anyio

WAIT = 30


async def test_the_record_names_the_view_and_what_it_called(tmp_path: Path) -> None:
    secret = "view-secret-0123456789abcdef"
    register(secret)
    index = TaskIndex(tmp_path / "tasks.sqlite3")
    async with demo_client("--poll-interval", "100", index=index) as demo:
        task = await demo.start_task("live_chart", {"label": "kept", "points": 400, "interval": 0.05})
        view = app_view(task, demo)
        assert view is not None
        sent = UpdateCounter(view)
        await eventually(lambda: bool(view.html), timeout=WAIT, what="the view")
        chart = {"name": "chart_points", "arguments": {"label": "kept", "api_key": "sk-live-123", "note": secret}}
        from_browser(view, {"type": "call", "id": 1, "method": "tools/call", "params": chart})
        await eventually(lambda: 1 in answers(sent), timeout=WAIT, what="the first answer")
        from_browser(view, {"type": "call", "id": 2, "method": "resources/read", "params": {"uri": VIEW_URI}})
        await eventually(lambda: 2 in answers(sent), timeout=WAIT, what="the second answer")
        from_browser(view, {"type": "link", "link": 1, "url": f"https://example.org/a?token=t0k3n&q={secret}"})
        from_browser(view, {"type": "link", "link": 1, "url": "https://example.org/", "answer": "asked"})
        from_browser(view, {"type": "link", "link": 1, "url": "https://example.org/", "answer": "opened"})
        asked = {"type": "link", "link": 2, "url": "https://example.org/?token=t0k3n", "answer": "asked"}
        from_browser(view, asked)
        from_browser(view, {"type": "link", "link": 2, "url": "x", "answer": "dismissed"})
        from_browser(view, {"type": "link", "link": "3", "url": "https://example.org/", "answer": "asked"})  # junk
        inner = {"name": "live_chart", "arguments": {"label": "inner", "points": 2, "interval": 0.01}}
        from_browser(view, {"type": "call", "id": 3, "method": "tools/call", "params": inner})
        await eventually(lambda: 3 in answers(sent), timeout=WAIT, what="the inner task's answer")
        stop = {"name": "steer_chart", "arguments": {"label": "kept", "action": "stop"}}
        from_browser(view, {"type": "call", "id": 4, "method": "tools/call", "params": stop})
        from_browser(view, {"type": "call", "id": 5, "method": "tools/call", "params": {"name": "nope"}})
        await asyncio.wait_for(task, WAIT)
        await eventually(lambda: {4, 5} <= set(answers(sent)), timeout=WAIT, what="every answer")
        (started,) = view.tasks
        await asyncio.wait_for(started, WAIT)
    index.flush()
    record = index.get(task.index_row or 0)
    assert record is not None and record.app_view is not None and record.started_by is None
    assert record.app_view.uri == VIEW_URI and record.app_view.more == 0
    calls = record.app_view.calls
    shown = [(c["method"], c.get("name") or c.get("uri") or c.get("url"), c["outcome"]) for c in calls]
    assert shown == [
        ("tools/call", "chart_points", "answered"),
        ("resources/read", VIEW_URI, "answered"),
        ("ui/open-link", "https://example.org/", "opened"),
        ("ui/open-link", "https://example.org/?token=%3Credacted%3E", "dismissed"),
        ("tools/call", "live_chart", "answered"),
        ("tools/call", "steer_chart", "answered"),
        ("tools/call", "nope", "refused"),  # unknown here: never sent
    ]
    assert calls[0]["arguments"] == {"label": "kept", "api_key": "<redacted>", "note": MARKER}
    times = [c["at"] for c in calls]
    assert record.started_at is not None and all(record.started_at <= t <= time.time() for t in times)
    assert calls[4]["record"] == started.index_row and "record" not in calls[0]  # a plain call has none
    # the task the view started: marked as started by it, naming the view's task's record
    inner_record = index.get(started.index_row or 0)
    assert inner_record is not None and inner_record.app_view is None
    assert inner_record.started_by == StartedBy(VIEW_URI, "live_chart", record.id, task.task_id)
    assert started.started_by == inner_record.started_by.as_data()
    assert task.app_view == record.app_view.as_data()

    # exports: show, list, JSON Lines, CSV, the DataFrame
    row = provenance_row(record)
    assert row["app_view"]["uri"] == VIEW_URI and len(row["app_view"]["calls"]) == 7
    assert provenance_row(inner_record)["started_by"] == inner_record.started_by.as_data()
    for name in ("tasks.jsonl", "tasks.csv"):
        write(rows([task, started], index=index), tmp_path / name)
        back = read_export(tmp_path / name)
        assert back[0]["app_view"] == row["app_view"] and back[1]["started_by"]["record"] == record.id
    frame = tasks_frame([task, started])
    assert frame["app_view"][0] == VIEW_URI and frame["view_calls"][0] == 7
    assert frame["started_by_view"][1] == VIEW_URI
    assert frame["started_by_record"][1] == record.id
    assert frame[["app_view", "view_calls"]].iloc[1].isna().all() and frame["started_by_view"].isna()[0]
    listed = _cli(index, "list")
    assert "live_chart [view]" in listed and "live_chart <- view of " + str(record.id)[:6] in listed
    shown_text = _cli(index, "show", str(record.id))
    assert "app_view" in shown_text and "chart_points" in shown_text and "<redacted>" in shown_text
    assert "started_by" in _cli(index, "show", str(inner_record.id))
    # no secret anywhere a study keeps
    kept = [
        # every byte of the index: the database, its WAL and shared-memory files
        b"".join(p.read_bytes() for p in sorted(tmp_path.glob("tasks.sqlite3*"))).decode("utf-8", "replace"),
        (tmp_path / "tasks.jsonl").read_text(),
        (tmp_path / "tasks.csv").read_text(),
        listed,
        shown_text,
        json.dumps(view.get_state(), default=str),
    ]
    assert "steer_chart" in kept[0] and "ui/open-link" in kept[0]  # the view's calls are in what was read
    for text in kept:
        assert secret not in text and "sk-live-123" not in text and "t0k3n" not in text


def _cli(index: TaskIndex, *argv: str) -> str:
    import os

    out = io.StringIO()
    before = os.environ.get("MTJ_INDEX")
    os.environ["MTJ_INDEX"] = str(index.path)
    try:
        assert cli.main(list(argv), out=out) == 0
    finally:
        if before is None:
            os.environ.pop("MTJ_INDEX", None)
        else:
            os.environ["MTJ_INDEX"] = before
    return out.getvalue()


def test_a_view_record_is_bounded() -> None:
    record = ViewRecord("ui://x/view.html")
    for n in range(MAX_CALLS + 5):
        record = record.with_call(view_call("tools/call", name=f"t{n}", arguments={"n": n}))
    assert len(record.calls) == MAX_CALLS and record.more == 5
    assert ViewRecord.from_json(record.as_json()) == record
    big = view_call("tools/call", name="t", arguments={"x": "y" * (MAX_ARGUMENTS_CHARS + 1)})
    assert big["arguments"] == {"[not kept]": f"{MAX_ARGUMENTS_CHARS + 10} characters"}
    assert view_call("resources/read", uri="ui://" + "u" * 2000)["uri"] == ("ui://" + "u" * 2000)[:500]
    assert view_call("ui/open-link", url="x", outcome="made up")["outcome"] == "failed"
    assert link_url("https://ada:pw@example.org/p?password=hunter2&page=2") == (
        "https://example.org/p?password=%3Credacted%3E&page=2"
    )
    for junk in ("", "[]", "{", '{"uri": 3}', '{"calls": []}'):
        assert ViewRecord.from_json(junk) is None and StartedBy.from_json(junk) is None


def test_an_index_of_version_6_gains_the_view_columns(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    db = sqlite3.connect(path)
    version_6 = SCHEMA.replace(",\n    app_view TEXT", "").replace(",\n    started_by TEXT", "")
    assert "app_view" not in version_6 and "started_by" not in version_6
    db.executescript(version_6)
    db.execute(
        "INSERT INTO tasks (id, server_name, target, tool, arguments, args_key, status, recorded_at, updated_at) "
        "VALUES (7, 'demo', 'x', 'live_chart', '{}', 'k', 'completed', 1, 1)"
    )
    db.execute("PRAGMA user_version = 6")
    db.commit()
    db.close()
    index = TaskIndex(path)
    [record] = index.records()
    assert (record.id, record.app_view, record.started_by) == (7, None, None)
    index.note_view(7, app_view=ViewRecord("ui://demo/v.html"), started_by=StartedBy("ui://demo/w.html", "w", 3))
    index.flush()
    [record] = index.records()
    assert record.app_view == ViewRecord("ui://demo/v.html") and record.started_by == StartedBy(
        "ui://demo/w.html", "w", 3
    )
    index.close()
    db = sqlite3.connect(path)
    assert {"app_view", "started_by"} <= {r[1] for r in db.execute("PRAGMA table_info(tasks)")}
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 7
    db.close()


async def test_the_saved_note_says_how_to_draw_the_view_again(tmp_path: Path) -> None:
    """Item 6: a recorded app task's saved output names the call that draws its view again (and carries its
    record for the labextension's button); without a record it says only to run the cell again."""
    from ipywidgets import VBox

    from mcp_tasks_jupyter.jupyter.display import app_output

    index = TaskIndex(tmp_path / "tasks.sqlite3")
    async with demo_client("--poll-interval", "100", index=index) as demo:
        task = await demo.start_task("live_chart", {"label": "n", "points": 2, "interval": 0})
        await asyncio.wait_for(task, WAIT)
        view = app_view(task, demo)
        assert view is not None and task.index_row is not None
        bundle = app_output(VBox([view]), task, view.uri)
    again = f"run the cell with a kernel to draw it again, or mtj.redraw_app({task.index_row})"
    assert bundle["text/plain"].endswith(again) and again in bundle["text/html"]
    assert f"<div class='mtj-app-note' data-mtj-record='{task.index_row}'>" in bundle["text/html"]
    async with demo_client("--poll-interval", "100") as demo:
        demo.index = None
        task = await demo.start_task("live_chart", {"label": "n", "points": 2, "interval": 0})
        await asyncio.wait_for(task, WAIT)
        view = app_view(task, demo)
        assert view is not None and task.index_row is None
        bundle = app_output(VBox([view]), task, view.uri)
    assert bundle["text/plain"].endswith("run the cell with a kernel to draw it again")
    assert "data-mtj-record" not in bundle["text/html"]
