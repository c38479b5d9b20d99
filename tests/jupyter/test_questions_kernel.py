"""A task's question in a REAL kernel: the form arrives in the widget's comm state, and an answer
sent over the comm as the browser sends it (a ``comm_msg`` with ``method: "custom"``) reaches the
server. Every iopub message is kept, whatever cell it belongs to: the form's updates come from a
background job (the connection), not from the cell that started the task.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.jupyter.kernel_harness import Notebook, running_kernel

DEMO = "{sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 100 --dialect 2025-11-25"
TASK_WIDGET = ".TaskWidget"


def task_widgets(nb: Notebook) -> list[dict[str, Any]]:
    """The comm_open messages of task widgets, oldest first."""
    return [
        m
        for m in nb.iopub
        if m["msg_type"] == "comm_open"
        and m["content"]["data"].get("state", {}).get("_anywidget_id", "").endswith(TASK_WIDGET)
    ]


def form_in(nb: Notebook, comm_id: str, state: str = "open", *, since: int = 0) -> dict[str, Any]:
    """The first form in ``state`` sent to widget ``comm_id`` from iopub message ``since`` on."""
    found = nb.wait(
        lambda m: any(q["state"] == state for q in _questions(m, comm_id)),
        what=f"a {state} form in widget {comm_id}",
        since=since,
    )
    return [q for q in _questions(found, comm_id) if q["state"] == state][-1]


def _questions(message: dict[str, Any], comm_id: str) -> list[dict[str, Any]]:
    if message["msg_type"] not in ("comm_msg", "comm_open") or message["content"]["comm_id"] != comm_id:
        return []
    return message["content"]["data"].get("state", {}).get("questions") or []


@pytest.fixture(scope="module")
def nb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Notebook]:
    home: Path = tmp_path_factory.mktemp("questions-kernel")
    with running_kernel(home) as kernel:
        notebook = Notebook(kernel)
        notebook.run("%load_ext mcp_tasks_jupyter")
        notebook.run(f"%mcp_connect --dialect 2025-11-25 demo {DEMO}")
        yield notebook


def test_the_form_is_answered_over_the_comm(nb: Notebook) -> None:
    mark = len(nb.iopub)
    cell = nb.run("h = %mcp_task demo:research topic=tides ambiguous=true stage_seconds=0.2")
    (opened,) = [m for m in task_widgets(nb)[-1:] if nb.iopub.index(m) >= mark]
    assert opened["parent_header"]["msg_id"] == cell  # the widget shown by the cell
    comm_id = opened["content"]["comm_id"]
    form = form_in(nb, comm_id, since=mark)
    assert "tides" in form["message"] and form["mode"] == "form"
    assert [(f["name"], f["kind"], f["required"]) for f in form["fields"]] == [
        ("interpretation", "choice", True),
        ("depth", "number", False),
    ]
    assert [o[0] for o in form["fields"][0]["options"]] == [
        "tides (history)",
        "tides (technology)",
        "tides (economics)",
    ]
    assert form["fields"][1]["default"] == 2
    # an invalid answer is refused in the kernel, with its errors in the form
    mark = len(nb.iopub)
    nb.send_custom(
        comm_id,
        {
            "type": "answer",
            "id": form["id"],
            "action": "accept",
            "content": {"interpretation": "tides (economics)", "depth": 9},
        },
    )
    refused = nb.wait(
        lambda m: any(q["attempts"] == 1 for q in _questions(m, comm_id)), what="the refusal", since=mark
    )
    (shown,) = _questions(refused, comm_id)
    assert shown["state"] == "open" and shown["errors"] == {"depth": ["must be at most 5"]}
    assert nb.kernel.value("h.status") == "input_required" and nb.kernel.value("h.answered") == []
    # then the browser sends a valid one
    nb.send_custom(
        comm_id,
        {
            "type": "answer",
            "id": form["id"],
            "action": "accept",
            "content": {"interpretation": "tides (economics)", "depth": 3},
        },
    )
    closed = form_in(nb, comm_id, "answered", since=mark)
    assert closed["id"] == form["id"] and closed["note"] == 'answered: interpretation="tides (economics)", depth=3'
    done = nb.run("r = await h\nprint(h.result().text)")
    text = nb.stdout(done)
    assert "**Interpretation:** tides (economics)" in text and "**Depth:** 3" in text
    assert nb.kernel.value("h.answered[0][1:]") == ("person", "accept")


def test_cancelling_the_task_closes_the_form_in_the_kernel(nb: Notebook) -> None:
    mark = len(nb.iopub)
    nb.run("h2 = %mcp_task demo:research topic=waves ambiguous=true stage_seconds=0.2")
    comm_id = task_widgets(nb)[-1]["content"]["comm_id"]
    form = form_in(nb, comm_id, since=mark)
    nb.run("await h2.cancel()")
    closed = form_in(nb, comm_id, "withdrawn", since=mark)
    assert closed["id"] == form["id"]
    assert closed["note"] == "the task was cancelled before this question was answered"
    mark = len(nb.iopub)
    nb.send_custom(
        comm_id,
        {"type": "answer", "id": form["id"], "action": "accept", "content": {"interpretation": "waves (history)"}},
    )  # a late click
    nb.run("import asyncio\nawait asyncio.sleep(0.3)")
    assert nb.kernel.value("(h2.status, h2.answered, h2.pending_input)") == ("cancelled", [], {})


def test_a_task_started_from_plain_code_gets_a_widget_in_the_latest_cell(nb: Notebook) -> None:
    nb.run("from mcp_tasks_jupyter.jupyter.runtime import get_runtime")
    mark = len(nb.iopub)
    nb.run(
        'h3 = await get_runtime().start_task("demo", "research", '
        '{"topic": "tides", "ambiguous": True, "stage_seconds": 1.0})'
    )
    latest = nb.run("x = 1")  # the cell run last when the question comes
    display = nb.wait(
        lambda m: (
            m["msg_type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        ),
        what="the displayed widget",
        since=mark,
    )
    assert display["parent_header"]["msg_id"] == latest
    assert display["content"]["data"]["text/plain"].startswith("<TaskHandle research on demo")
    model_id = display["content"]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
    form = form_in(nb, model_id, since=mark)
    nb.send_custom(
        model_id,
        {"type": "answer", "id": form["id"], "action": "accept", "content": {"interpretation": "tides (history)"}},
    )
    done = nb.run("r3 = await h3\nprint(r3.structured['interpretation'], r3.structured['depth'])")
    assert nb.stdout(done).strip() == "tides (history) 2"
