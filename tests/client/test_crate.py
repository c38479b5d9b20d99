"""The RO-Crate export's rules, on records made here (``exports/crate.py``): file names are ours, a crate
claims no status the index does not hold, a license missing is said, a folder that is no crate is never
overwritten, and ``mcp-tasks export --ro-crate``. The crate of a real run, validated:
tests/jupyter/test_crate_run.py."""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.exports.cli import main
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex

SERVER = ServerIdentity(
    "lab",
    "https://user:pw@mcp.example.org/mcp?key=abc#x",
    "http",
    "2025-11-25",
    "2025-11-25",
    "example-server",
    "2.1",
)
SCHEMA = "http://schema.org/"


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TaskIndex:
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    monkeypatch.delenv("MTJ_AUTHOR", raising=False)
    index = TaskIndex(tmp_path / "tasks.sqlite3")
    hostile = index.add(SERVER, "../../etc/passwd", {"path": "../x", "token": "t-0123456789"}, task_id="../../id")
    assert hostile is not None
    index.update(
        hostile,
        task_id="../../id",
        status="completed",
        status_message=None,
        finished_at=2e9,
        result={"content": [{"type": "text", "text": "done"}], "structuredContent": {"rows": 3}},
    )
    running = index.add(SERVER, "slow", {"n": 1}, task_id="t2")
    assert running is not None
    index.close()
    return index


def graph(crate: Path) -> dict[str, Any]:
    return {e["@id"]: e for e in json.loads((crate / "ro-crate-metadata.json").read_text())["@graph"]}


def test_files_are_named_by_us_and_no_status_is_claimed_that_the_index_lacks(
    index: TaskIndex, tmp_path: Path
) -> None:
    crate = tmp_path / "study.crate"
    assert mtj.export(None, crate, index=index, license="CC0-1.0") == 2
    files = sorted(str(p.relative_to(crate)) for p in crate.rglob("*") if p.is_file())
    assert len(files) == 2 and files[1] == "ro-crate-metadata.json"
    assert files[0].startswith("results/task-") and files[0].removeprefix("results/task-")[:-5].isdigit()
    entities = graph(crate)
    actions = {e["name"]: e for e in entities.values() if e["@type"] == "CreateAction"}
    done, running = actions["../../etc/passwd on lab (task ../../id)"], actions["slow on lab (task t2)"]
    assert done["actionStatus"] == SCHEMA + "CompletedActionStatus" and done["endTime"].endswith("+00:00")
    assert "actionStatus" not in running and "endTime" not in running and "error" not in running
    assert entities[done["instrument"]["@id"]]["url"] == "https://mcp.example.org/mcp"  # no user, query, fragment
    assert done["instrument"]["@id"] == "https://mcp.example.org/mcp#..%2F..%2Fetc%2Fpasswd"
    values = {entities[i["@id"]]["name"]: entities[i["@id"]]["value"] for i in done["object"]}
    assert values == {"path": "../x", "token": "<redacted>"}
    result = [entities[r["@id"]] for r in done["result"]]
    assert result[0]["text"] == "done" and json.loads(result[1]["value"]) == {"rows": 3}
    raw = b"".join(p.read_bytes() for p in crate.rglob("*") if p.is_file())
    assert b"t-0123456789" not in raw and b"pw@" not in raw and b"key=abc" not in raw
    assert entities["./"]["license"] == {"@id": "https://spdx.org/licenses/CC0-1.0"}


def test_a_crate_without_a_license_says_so(index: TaskIndex, tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="the crate has no license: RO-Crate 1.1 requires one"):
        mtj.export(None, tmp_path / "study.crate.zip", index=index)
    with zipfile.ZipFile(tmp_path / "study.crate.zip") as archive:
        root = {e["@id"]: e for e in json.loads(archive.read("ro-crate-metadata.json"))["@graph"]}["./"]
    assert "license" not in root
    (tmp_path / "jupyter-config").mkdir()
    (tmp_path / "jupyter-config" / "mcp-tasks-jupyter.json").write_text('{"license": "CC-BY-4.0"}')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the setting gives the license: nothing to say
        mtj.export(None, tmp_path / "again.crate", index=index)
    assert graph(tmp_path / "again.crate")["./"]["license"] == {"@id": "https://spdx.org/licenses/CC-BY-4.0"}


def test_a_folder_that_is_no_crate_is_never_overwritten(index: TaskIndex, tmp_path: Path) -> None:
    mine = tmp_path / "mine.crate"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    with pytest.raises(mtj.UsageError, match="holds files and no RO-Crate"):
        mtj.export(None, mine, index=index, license="CC0-1.0")
    assert (mine / "thesis.tex").read_text() == "years of work"
    crate = tmp_path / "study.crate"
    mtj.export(None, crate, index=index, license="CC0-1.0")
    (crate / "stale.txt").write_text("left from before")
    mtj.export(None, crate, index=index, license="CC0-1.0")  # a crate written before is replaced whole
    assert not (crate / "stale.txt").exists() and (crate / "ro-crate-metadata.json").is_file()


def test_the_command_line_writes_a_crate(index: TaskIndex, tmp_path: Path) -> None:
    out = io.StringIO()
    where = ["--index", str(index.path)]
    assert main([*where, "export", "--ro-crate", str(tmp_path / "cli.zip"), "--status", "completed"], out=out) == 0
    said = out.getvalue()
    assert (
        "exported 1 task as an RO-Crate (Process Run Crate 0.5)" in said
        and "note: the crate has no license" in said
    )
    assert zipfile.is_zipfile(tmp_path / "cli.zip")
    out = io.StringIO()
    argv = [
        *where,
        "export",
        str(tmp_path / "x.crate"),
        "--license",
        "https://example.org/licence",
        "--name",
        "Tides",
    ]
    assert main(argv, out=out) == 0 and "note:" not in out.getvalue()
    root = graph(tmp_path / "x.crate")["./"]
    assert root["name"] == "Tides" and root["license"] == {"@id": "https://example.org/licence"}
    err = io.StringIO()
    assert (
        main([*where, "export"], out=io.StringIO(), err=err) == 1
        and "give PATH, or --ro-crate PATH" in err.getvalue()
    )
