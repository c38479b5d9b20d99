"""The RO-Crate export's rules, on records made here (``exports/crate.py``): file names are ours, a crate
claims no status the index does not hold, a license missing is said, a folder that is no crate is never
overwritten, and ``mcp-tasks export --ro-crate``. The crate of a real run, validated:
tests/jupyter/test_crate_run.py."""

from __future__ import annotations

import io
import json
import time
import uuid
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.exports.cli import main
from mcp_tasks_jupyter.index import sweeps
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex
from mcp_tasks_jupyter.running.sweep import LOST_NOTE

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


def _a_sweep(index: TaskIndex, outcomes: list[tuple[str, str | None]], *, finished: bool) -> str:
    """A sweep of ``slow`` recorded as ``client.map`` records one: an item per outcome (its status, or None:
    still queued), each ended item with its own task record; the index's public sweep store writes it."""
    store = sweeps.SweepStore(index.location, index.describe())
    owner, ident, now = sweeps.new_owner(), f"sw-{uuid.uuid4().hex[:8]}", time.time()
    row = sweeps.SweepRow(
        ident, "lab", SERVER.target, "slow", "k", len(outcomes), 2, None, None, "res", now, now, None
    )
    listed = [(json.dumps({"n": n, "token": "<redacted>"}), f"k{n}") for n in range(len(outcomes))]
    try:
        store.now(sweeps.record_sweep, row, listed, owner)
        changes = []
        for n, (status, note) in enumerate(outcomes):
            if status is None:
                continue
            record = index.add(SERVER, "slow", {"n": n, "token": "t-0123456789"}, task_id=f"s{n}")
            assert record is not None
            index.update(
                record, task_id=f"s{n}", status=status, status_message=None, finished_at=now + n, result=None
            )
            changes.append(
                (n, {"state": "ended", "task_id": f"s{n}", "record": record, "status": status, "note": note})
            )
        store.now(sweeps.claim, ident, owner, [n for n, _ in changes])
        store.now(sweeps.mark, ident, owner, changes)
        store.now(sweeps.finish, ident, owner, finished)
    finally:
        store.close()
    index.flush()
    return ident


def test_a_sweep_is_one_action_over_its_items_actions_in_order(index: TaskIndex, tmp_path: Path) -> None:
    ident = _a_sweep(index, [("completed", None), ("error", LOST_NOTE), (None, None)], finished=False)
    store = sweeps.SweepStore(index.location, index.describe())
    store.now(sweeps.came_back, ident, {"before": [0], "lost": [1], "fresh": [2]})  # as a resume writes it
    store.close()
    crate = tmp_path / "sweep.crate"
    mtj.export({"tool": "slow"}, crate, index=index, license="CC0-1.0")
    entities = graph(crate)
    sweep = entities[f"#sweep-{ident}"]
    assert (
        sweep["@type"] == "OrganizeAction"
        and sweep["name"] == "a sweep of slow on lab: 3 items, at most 2 at once"
    )
    parts = [entities[p["@id"]]["name"] for p in sweep["object"]]
    assert parts == ["slow on lab (task s0)", "slow on lab (task s1)"]  # its parts, in the sweep's order
    assert "actionStatus" not in sweep and "endTime" not in sweep  # one item is still queued: nothing claimed
    assert "1 sent again: the server no longer had its task" in sweep["description"]
    assert (
        "its latest resume found 1 ended before, 1 sent again (the server lost them), 1 sent fresh"
        in sweep["description"]
    )
    assert entities[sweep["instrument"]["@id"]]["name"] == "mcp-tasks-jupyter"
    assert {"@id": sweep["@id"]} in entities["./"]["mentions"]
    plan = json.loads((crate / sweep["result"]["@id"]).read_text())
    assert [(i["position"], i["state"], i["came_back"], i["action"]) for i in plan["items"]] == [
        (0, "ended", "before", sweep["object"][0]["@id"]),
        (1, "ended", "lost", sweep["object"][1]["@id"]),
        (2, "queued", "fresh", None),
    ]
    assert b"t-0123456789" not in b"".join(p.read_bytes() for p in crate.rglob("*") if p.is_file())


def test_a_finished_sweep_claims_completed_only_when_every_item_completed(
    index: TaskIndex, tmp_path: Path
) -> None:
    _a_sweep(index, [("completed", None), ("cancelled", None), ("error", None)], finished=True)
    mtj.export({"tool": "slow"}, tmp_path / "a.crate", index=index, license="CC0-1.0")
    [failed] = [e for e in graph(tmp_path / "a.crate").values() if e["@type"] == "OrganizeAction"]
    assert failed["actionStatus"] == SCHEMA + "FailedActionStatus" and failed["endTime"].endswith("+00:00")
    assert failed["error"] == "not every item completed: 1 cancelled, 1 completed, 1 error"
    _a_sweep(index, [("completed", None), ("completed", None)], finished=True)
    mtj.export({"tool": "slow"}, tmp_path / "b.crate", index=index, license="CC0-1.0")
    done = [e for e in graph(tmp_path / "b.crate").values() if e["@type"] == "OrganizeAction"]
    assert [d.get("actionStatus") for d in done] == [
        SCHEMA + "FailedActionStatus",
        SCHEMA + "CompletedActionStatus",
    ]
