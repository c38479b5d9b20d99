"""A study's tasks exported as an RO-Crate and validated (issue 34 items 1 and 2): a real run on the
bundled demo over HTTP (a completed task, a tool error, a cancelled task, a declined question), a task
with a secret argument on a second server, and the parameterised notebook run headless by papermill,
all in one task index; the crate (a directory and a zip) passes ``roc-validator``'s ``ro-crate-1.1`` and
``process-run-crate-0.5`` profiles at the REQUIRED and RECOMMENDED levels, with no network."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.index.task_index import TaskIndex
from mcp_tasks_jupyter.index.view_record import StartedBy, ViewRecord, view_call
from tests.faults.server import TOOLS, http_fault_server
from tests.support import REPO_ROOT, start_demo_http
from tests.support.crate_validator import metadata, validate, without_persons_part

pytestmark = [pytest.mark.anyio, pytest.mark.kernel, pytest.mark.timeout(300)]

WAIT = 30  # seconds: a bound on every wait
SCHEMA = "http://schema.org/"
ROR = "https://ror.org/05gq02987"
VIEW = "ui://demo/live-chart.html"  # an organization's persistent id (a ROR id) stands for its URL


async def _decline(_request: object) -> dict[str, str]:
    return {"action": "decline"}


async def _tasks_on_the_demo(url: str) -> None:
    async with mtj.connect(url, index=TaskIndex(), elicitation_handler=_decline) as client:
        done = await client.start_task("slow_compute", {"seconds": 0.2, "steps": 2, "label": "tides"})
        broken = await client.start_task("failing_job", {"seconds": 0, "message": "the gauge is broken"})
        declined = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0})
        stopped = await client.start_task("slow_compute", {"seconds": 60, "steps": 60, "label": "long"})
        await asyncio.wait_for(mtj.gather(done, broken, declined, return_exceptions=True), WAIT)
        await stopped.cancel()
        await asyncio.wait_for(mtj.gather(stopped, return_exceptions=True), WAIT)
        statuses = [h.status for h in (done, broken, declined, stopped)]
        assert statuses == ["completed", "error", "declined", "cancelled"]
        grid = [{"seconds": 0.05, "steps": 1, "label": f"grid-{n}"} for n in range(3)]
        swept = await client.map("slow_compute", grid, limit=2)
        assert [r.structured["label"] for r in await swept.gather(timeout=WAIT)] == ["grid-0", "grid-1", "grid-2"]


async def _a_secret_argument(secret: str) -> None:
    async with http_fault_server() as server:
        signed = {"type": "object", "properties": {"seconds": {"type": "number"}, "api_key": {"type": "string"}}}
        tools = [{**tool, "inputSchema": signed} if tool["name"] == "job" else tool for tool in TOOLS]
        server.brain.script["tools/list"] = lambda _message: {"tools": tools}
        async with mtj.connect(server.url, index=TaskIndex()) as client:
            handle = await client.start_task("job", {"seconds": 0.1, "api_key": secret})
            await asyncio.wait_for(handle, WAIT)


def _papermill(url: str, where: Path) -> Path:
    (where / "notebooks").symlink_to(REPO_ROOT / "notebooks")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("JPY_SESSION_NAME", None)
    env.update(MTJ_AUTHOR="Josiah Carberry", MTJ_ORCID="0000-0002-1825-0097", MTJ_AFFILIATION=ROR)
    out = where / "study-run.ipynb"
    argv = [sys.executable, "-m", "papermill", "notebooks/09-papermill.ipynb", str(out)]
    argv += ["-y", f"topics: [moons]\nserver: {url}\ncrate: {where / 'in-notebook.crate.zip'}"]
    done = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, timeout=200)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _a_view_on_record(secret: str) -> None:
    """What an MCP Apps view called, as the app view widget notes it (through the index's own interface; a
    browser draws views in tests/browser/test_apps_browser.py): the completed task's view started the tool
    error's task."""
    index = TaskIndex()
    done = next(r for r in index.records() if r.tool == "slow_compute" and r.status == "completed")
    started = next(r for r in index.records() if r.tool == "failing_job")
    call = view_call(
        "tools/call", name="failing_job", arguments={"message": "m", "api_key": secret}, record=started.id
    )
    index.note_view(done.id, app_view=ViewRecord(VIEW, (call,)))
    index.note_view(started.id, started_by=StartedBy(VIEW, "slow_compute", done.id, done.task_id))
    index.close()


def _by_type(graph: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in graph.values() if kind in ([e["@type"]] if isinstance(e["@type"], str) else e["@type"])]


def _ids(value: Any) -> list[str]:
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


async def test_a_studys_crate_holds_every_kind_of_task_and_validates(tmp_path: Path) -> None:
    secret = "sk-live-" + os.urandom(8).hex()
    mtj.set_author("Josiah Carberry", orcid="0000-0002-1825-0097", affiliation=ROR)
    try:
        with start_demo_http("--poll-interval", "100") as url:
            await _tasks_on_the_demo(url)
            await _a_secret_argument(secret)
            output = await asyncio.to_thread(_papermill, url, tmp_path)
        _a_view_on_record(secret)
        crate = tmp_path / "study.crate"
        assert mtj.export(None, crate, license="CC-BY-4.0", publisher=ROR) == len(TaskIndex().records()) == 9
        zipped = tmp_path / "study.crate.zip"
        assert mtj.export(None, zipped, license="CC-BY-4.0", publisher=ROR) == 9
    finally:
        mtj.set_author()

    for path in (crate, zipped):
        issues, asked = validate(path)
        assert issues == [], "\n".join(issues)
        assert set(asked) <= {"https://w3id.org/ro/crate/1.1/context"} | {a for a in asked if a.endswith("404")}

    graph = metadata(crate)
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for action in _by_type(graph, "CreateAction"):
        by_tool.setdefault(graph[action["instrument"]["@id"]]["name"], []).append(action)
    [broken] = by_tool["failing_job"]
    assert broken["actionStatus"] == SCHEMA + "FailedActionStatus" and "the gauge is broken" in broken["error"]
    # the MCP Apps view: what it called is a file about its task's action; the task it started says so
    [viewed] = [a for a in by_tool["slow_compute"] if "subjectOf" in a]
    about = graph[viewed["subjectOf"]["@id"]]
    assert about["about"] == {"@id": viewed["@id"]} and about["@id"].startswith("views/task-")
    kept = json.loads((crate / about["@id"]).read_text())
    assert kept["uri"] == VIEW and [c["name"] for c in kept["calls"]] == ["failing_job"]
    assert kept["calls"][0]["record"] == int(broken["@id"].removeprefix("#task-"))
    assert (
        f"started from the MCP Apps view {VIEW} of the tool slow_compute (the view of {viewed['@id']})"
        in (broken["description"])
    )
    [sweep] = _by_type(graph, "OrganizeAction")  # the sweep: one action, its three items' actions its parts
    items = [graph[i] for i in _ids(sweep["object"])]
    labels = [json.loads(graph[i["result"][1]["@id"]]["value"])["label"] for i in items]
    assert labels == [f"grid-{n}" for n in range(3)]  # in the sweep's order
    assert sweep["actionStatus"] == SCHEMA + "CompletedActionStatus" and sweep["endTime"] >= sweep["startTime"]
    assert sweep["name"] == "a sweep of slow_compute on " + items[0]["name"].split(" on ")[1].split(" (")[0] + (
        ": 3 items, at most 2 at once"
    )
    singles = [a for a in by_tool["slow_compute"] if a not in items]
    done, stopped = sorted(singles, key=lambda a: "cancelled" in a["description"])
    assert done is viewed
    assert done["actionStatus"] == SCHEMA + "CompletedActionStatus" and "error" not in done
    assert stopped["actionStatus"] == SCHEMA + "FailedActionStatus" and "cancelled" in stopped["description"]
    assert graph[stopped["result"]["@id"]]["value"] == "cancelled"  # no result: the outcome says why
    declined = [a for a in by_tool["research"] if "declined" in a["description"]]
    assert declined and declined[0]["actionStatus"] == SCHEMA + "FailedActionStatus"
    [signed] = by_tool["job"]
    assert {graph[i]["name"]: graph[i]["value"] for i in _ids(signed["object"])}["api_key"] == "<redacted>"
    # the declined question: its answer an input, who answered it said
    answers = [e for e in _by_type(graph, "PropertyValue") if e["name"].startswith("the answer to")]
    assert any(a["description"] == "decline, answered by the program's answer handler" for a in answers)
    # the person, by their ORCID iD, with the organization's persistent id; the license; the profile
    person = graph["https://orcid.org/0000-0002-1825-0097"]
    assert person["name"] == "Josiah Carberry" and person["affiliation"] == {"@id": ROR}
    root = graph["./"]
    assert root["license"] == {"@id": "https://spdx.org/licenses/CC-BY-4.0"}
    assert root["conformsTo"] == [
        {"@id": "https://w3id.org/ro/wfrun/process/0.5"},
        {"@id": "https://w3id.org/ro/crate/1.1"},
    ]
    actions = _by_type(graph, "CreateAction") + _by_type(graph, "OrganizeAction")
    assert set(_ids(root["mentions"])) == {a["@id"] for a in actions}
    # results: files named by us, inside the crate, their hashes true
    files = [e for e in _by_type(graph, "File")]
    for entity in files:
        assert not entity["@id"].startswith(("/", "..")) and ".." not in entity["@id"]
        data = (crate / entity["@id"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entity["sha256"] and int(entity["contentSize"]) == len(data)
    results = [e["@id"] for e in files if e["@id"].startswith("results/")]
    assert all(r.removeprefix("results/task-").removesuffix(".json").isdigit() for r in results)
    # the papermill run: its own action, the input and output notebooks and the parameters
    [run] = [a for a in _by_type(graph, "CreateAction") if a["@id"].startswith("#notebook-run-")]
    assert run["instrument"]["@id"].startswith("https://pypi.org/project/papermill/")
    inputs = {graph[i]["name"]: graph[i] for i in _ids(run["object"])}
    assert "09-papermill.ipynb" in inputs and inputs["topics"]["value"] == '["moons"]'
    assert graph[run["result"]["@id"]]["name"] == output.name
    # no secret anywhere in the crate or its zip
    everything = b"".join(p.read_bytes() for p in crate.rglob("*") if p.is_file())
    with zipfile.ZipFile(zipped) as archive:
        everything += b"".join(archive.read(name) for name in archive.namelist())
    assert secret.encode() not in everything and b"<redacted>" in everything
    # the notebook's own crate, written by its last cell, validates too; a run that writes its own crate
    # cannot know its end yet (papermill writes it when the last cell is done), so that one is said
    issues, _ = validate(tmp_path / "in-notebook.crate.zip")
    left = [i for i in without_persons_part(issues) if "8.4 The Action SHOULD have an endTime" not in i]
    assert left == [], "\n".join(issues)
