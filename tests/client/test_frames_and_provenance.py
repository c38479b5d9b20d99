"""DataFrames of results and tasks (issue 16, item 3) and the provenance export (item 4), against the
demo server and the real task index of each test (``MTJ_INDEX``, set by tests/conftest.py)."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.exports.provenance import COLUMNS
from mcp_tasks_jupyter.index.task_index import SCHEMA_VERSION, TaskIndex, canonical_json, default_index
from mcp_tasks_jupyter.redact import REDACTED
from tests.support.processes import python_env

pytestmark = pytest.mark.anyio

WAIT = 20.0
FAST = ("--poll-interval", "100")
QUICK = {"stage_seconds": 0.05}


async def test_a_result_as_a_dataframe(connect_demo):
    async with connect_demo(*FAST) as client:
        research = await client.start_task("research", {"topic": "tides", **QUICK})
        compute = await client.start_task("slow_compute", {"seconds": 0.1, "steps": 1})
        report, stats = await asyncio.wait_for(asyncio.gather(research, compute), WAIT)
        echoed = await client.call_tool("echo", {"text": "plain"})
    frame = report.to_dataframe()  # a mapping holding one list of records: its "sources"
    assert list(frame.columns) == ["title", "url"] and len(frame) == len(report.structured["sources"]) > 1
    assert frame["url"].tolist() == [s["url"] for s in report.structured["sources"]]
    with pytest.raises(mtj.UsageError, match=r"mapping holding no list of records .*'value'"):
        stats.to_dataframe()
    assert echoed.structured is None
    with pytest.raises(mtj.UsageError, match="no structured content"):
        echoed.to_dataframe()


def test_structured_content_that_is_no_table_says_what_it_is() -> None:
    def result(structured: Any) -> mtj.ToolResult:
        return mtj.ToolResult.from_wire({"content": [], "structuredContent": structured})

    assert result([{"a": 1}, {"a": 2, "b": "x"}]).to_dataframe().to_dict("records")[1] == {"a": 2, "b": "x"}
    assert len(result({"rows": [], "total": 0}).to_dataframe()) == 0
    with pytest.raises(mtj.UsageError, match="a list holding int, str, not a list of records"):
        result([1, "two", {"a": 3}]).to_dataframe()
    with pytest.raises(mtj.UsageError, match="several lists of records \\('a', 'b'\\): pick one"):
        result({"a": [{"x": 1}], "b": [{"y": 2}]}).to_dataframe()
    with pytest.raises(mtj.UsageError, match="is a str"):
        result("text").to_dataframe()


async def test_one_row_per_task(connect_demo):
    async with connect_demo(*FAST) as client:
        handles = [
            await client.start_task("slow_compute", {"seconds": 0.1, "steps": 2, "label": "first"}),
            await client.start_task("failing_job", {"seconds": 0.1, "mode": "protocol_error", "message": "no"}),
            await client.start_task("slow_compute", {"seconds": 0.1, "steps": 3, "label": "third"}),
        ]
        await asyncio.wait_for(asyncio.gather(*handles, return_exceptions=True), WAIT)
        running = await client.start_task("slow_compute", {"seconds": 30, "steps": 1})
        frame = mtj.to_dataframe([*handles, running])
        await running.cancel()
    assert frame.columns[:11].tolist() == [
        "server",
        "tool",
        "label",
        "status",
        "started",
        "finished",
        "duration",
        "error",
        "summary",
        "task_id",
        "cached",
    ]
    assert frame["tool"].tolist() == ["slow_compute", "failing_job", "slow_compute", "slow_compute"]
    assert frame["status"].tolist() == ["completed", "failed", "completed", "working"]
    assert frame["label"][0] == "label=first seconds=0.1 steps=2"
    # each argument is a column; one named like a task column gets "arg."; the flat structured
    # result's fields follow, "result." where the name is taken
    assert frame["arg.label"].tolist()[::2] == ["first", "third"] and frame["steps"].tolist()[:1] == [2]
    assert frame["result.label"][0] == "first" and frame["value"][0] == handles[0].result().structured["value"]
    assert "no" in frame["error"][1] and frame["error"].isna()[[0, 2, 3]].all()
    assert str(frame["started"].dtype).startswith("datetime64") and str(frame["started"].dt.tz) == "UTC"
    assert pd.isna(frame["finished"][3]) and pd.isna(frame["duration"][3]) and frame["duration"][0] > 0
    assert frame["summary"][0] and frame["task_id"].tolist() == [h.task_id for h in [*handles, running]]


@pytest.mark.loopback
def test_pandas_is_imported_only_when_asked_for_and_its_absence_is_explained() -> None:
    script = (
        "import sys\n"
        "import mcp_tasks_jupyter as mtj, mcp_tasks_jupyter.exports.frames, mcp_tasks_jupyter.exports.provenance\n"
        "assert 'pandas' not in sys.modules, 'imported early'\n"
        "sys.modules['pandas'] = None  # as if it were not installed\n"
        "result = mtj.ToolResult.from_wire({'content': [], 'structuredContent': [{'a': 1}]})\n"
        "try:\n"
        "    result.to_dataframe()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=python_env(), timeout=60, check=True
    )
    assert "DataFrames need pandas, which is not installed: pip install 'mcp-tasks-jupyter[pandas]'" in done.stdout


async def test_provenance_of_every_task(connect_demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index_env):
    monkeypatch.setenv("JPY_SESSION_NAME", "studies/tides.ipynb")
    asked: list[dict[str, Any]] = []

    async def person(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        reading = params["requestedSchema"]["properties"]["interpretation"]["oneOf"][-1]["const"]
        return {"action": "accept", "content": {"interpretation": reading, "depth": 1}}

    async with connect_demo(*FAST) as client:
        client.index = default_index()
        client.ask_user = person
        preset = await client.start_task(
            "research",
            {"topic": "tides", "ambiguous": True, **QUICK},
            answers={"interpretation": "tides (economics)"},
        )
        by_person = await client.start_task("research", {"topic": "tides", "ambiguous": True, **QUICK})
        failing = await client.start_task(
            "failing_job", {"seconds": 0.1, "mode": "protocol_error", "message": "the upstream said no"}
        )
        # As a tool that takes other names too would (the demo ignores names it does not know).
        (await client.tool("slow_compute")).input_schema["additionalProperties"] = {"type": "string"}
        with pytest.warns(UserWarning, match="api_token"):
            secret = await client.start_task(
                "slow_compute", {"seconds": 0.1, "steps": 1, "api_token": "tok-9f8e7d"}
            )
        await asyncio.wait_for(asyncio.gather(preset, by_person, failing, secret, return_exceptions=True), WAIT)
        again = await client.start_task(
            "slow_compute", {"seconds": 0.1, "steps": 1, "api_token": "tok-9f8e7d"}, cache=True
        )
        assert again.cached
        info = client.describe()
        jsonl = tmp_path / "provenance.jsonl"
        assert mtj.export([preset, by_person, failing, secret, again], jsonl) == 5
        csv_path = tmp_path / "failed.csv"
        assert mtj.export({"status": "failed"}, csv_path) == 1
    rows = mtj.read_export(jsonl)
    assert [set(row) for row in rows] == [set(COLUMNS)] * 5
    first = rows[0]
    assert (first["server"], first["server_software"], first["server_version"]) == (
        client.name,
        info["server"],
        info["version"],
    )
    assert (first["protocol"], first["dialect"], first["transport"]) == (
        "2025-11-25",
        "2025-11-25",
        info["transport"],
    )
    assert first["tool"] == "research" and first["arguments"]["topic"] == "tides"
    assert first["notebook"] == "studies/tides.ipynb" and first["task_id"] == preset.task_id
    assert first["questions"] == [
        {
            "question": "'tides' can be read several ways. Which one should the research follow?",
            "source": "answers",
            "action": "accept",
            "content": {"interpretation": "tides (economics)", "depth": 2},  # the schema's default filled in
        }
    ]
    assert (
        [(q["source"], q["content"]) for q in rows[1]["questions"]]
        == [
            (
                "person",
                {
                    "interpretation": asked[0]["requestedSchema"]["properties"]["interpretation"]["oneOf"][-1][
                        "const"
                    ],
                    "depth": 1,
                },
            )
        ]
        and len(asked) == 1
        and rows[1]["status"] == "completed"
    )
    assert first["status"] == "completed" and first["error"] is None and first["cached"] is False
    digest = hashlib.sha256(canonical_json(preset.result().raw).encode()).hexdigest()
    assert first["result_sha256"] == digest and first["result_bytes"] == len(
        canonical_json(preset.result().raw).encode()
    )
    assert first["started_at"] < first["finished_at"] and first["created_at"] and first["duration_s"] > 0
    assert rows[2]["status"] == "failed" and "the upstream said no" in rows[2]["error"]
    assert rows[2]["result_sha256"] is None and rows[2]["questions"] == []
    assert rows[3]["arguments"]["api_token"] == REDACTED
    assert rows[4]["cached"] is True and rows[4]["record"] == rows[3]["record"]
    assert rows[4]["result_sha256"] == rows[3]["result_sha256"]
    assert b"tok-9f8e7d" not in jsonl.read_bytes()
    [failed] = mtj.read_export(csv_path)
    assert failed["tool"] == "failing_job" and failed["record"] == str(rows[2]["record"])
    assert failed["arguments"]["message"] == "the upstream said no"


def test_exporting_without_records_or_with_a_bad_filter(tmp_path: Path) -> None:
    with pytest.raises(mtj.UsageError, match="unknown filter key\\(s\\) colour"):
        mtj.export({"colour": "red"}, tmp_path / "x.jsonl")
    assert mtj.export(None, tmp_path / "empty.jsonl") == 0 and mtj.read_export(tmp_path / "empty.jsonl") == []
    with pytest.raises(mtj.UsageError, match="cannot write"):
        mtj.export(None, tmp_path / "missing-dir" / "x.jsonl")


V2_SCHEMA = """
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY, server_name TEXT NOT NULL, target TEXT NOT NULL, transport TEXT, protocol TEXT,
    dialect TEXT, tool TEXT NOT NULL, arguments TEXT NOT NULL, args_key TEXT NOT NULL, task_id TEXT,
    notebook TEXT, out_var TEXT, created_at TEXT, ttl_ms INTEGER, status TEXT NOT NULL, status_message TEXT,
    result TEXT, recorded_at REAL NOT NULL, updated_at REAL NOT NULL);
INSERT INTO tasks VALUES (7, 'demo', 'http://x/mcp', 'http', '2025-11-25', '2025-11-25', 'echo', '{}', 'k',
    't7', NULL, NULL, NULL, NULL, 'completed', NULL, '{"content":[]}', 1.0, 2.0);
PRAGMA user_version = 2;
"""


def test_a_version_2_index_gains_the_provenance_columns(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(V2_SCHEMA)
    db.close()
    [record] = TaskIndex(path).records()
    assert (record.id, record.questions, record.started_at, record.error, record.recorded_at) == (
        7,
        [],
        None,
        None,
        1.0,
    )
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {"server_software", "server_version", "started_at", "finished_at", "questions", "error"} <= {
        r[1] for r in db.execute("PRAGMA table_info(tasks)")
    }
    rows = mtj.read_export(tmp_path / "out.jsonl") if mtj.export([record], tmp_path / "out.jsonl") else []
    assert (
        rows[0]["result_sha256"] == hashlib.sha256(b'{"content":[]}').hexdigest() and rows[0]["result_bytes"] == 14
    )
