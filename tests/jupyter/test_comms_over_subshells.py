"""Comm messages handled on a kernel subshell's thread (issue 30's standard: nothing lost). JupyterLab sends
a widget's messages over a subshell of its own when the kernel has subshells (its default,
``commsOverSubshells: perCommTarget``), and ipykernel 7 then handles a comm's message on the thread (and loop)
of the subshell its last message to the browser went out under: after the kernel answered the browser once
(a refused answer, say), the next Cancel or answer runs off the kernel's loop. Each widget's handler hands
itself over to the kernel's loop, where the tasks live. A real kernel, a real subshell, the browser's
messages sent as JupyterLab sends them (each with the subshell's id)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_jupyter.jupyter.comm import TARGET
from tests.jupyter.kernel_harness import Kernel, Notebook, running_kernel
from tests.jupyter.test_questions_kernel import DEMO, _questions, form_in, task_widgets
from tests.jupyter.test_tasks_channel_kernel import channel_data, task_seen

WAIT = 20  # seconds: a bound on every wait


def create_subshell(kernel: Kernel) -> str:
    client = kernel.client
    request = client.session.msg("create_subshell_request", {})
    client.control_channel.send(request)
    deadline = time.monotonic() + WAIT
    while True:
        reply = client.get_control_msg(timeout=max(0.1, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
            return str(reply["content"]["subshell_id"])


def send_over(nb: Notebook, subshell: str, comm_id: str, content: dict[str, Any]) -> None:
    """A widget's custom message as JupyterLab sends it over the comm target's subshell."""
    client = nb.kernel.client
    message = client.session.msg(
        "comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}}
    )
    message["header"]["subshell_id"] = subshell
    client.shell_channel.send(message)


@pytest.fixture
def nb(tmp_path: Path) -> Iterator[Notebook]:
    with running_kernel(tmp_path) as kernel:
        notebook = Notebook(kernel)
        notebook.run("%load_ext mcp_tasks_jupyter")
        notebook.run(f"%mcp_connect demo {DEMO}")
        yield notebook


def _refused_then(nb: Notebook, subshell: str) -> tuple[str, dict[str, Any]]:
    """A task asking a question; an invalid answer sent over the subshell, refused with its errors (the kernel's
    answer to the browser goes out under that message: the comm's next message is handled on the subshell)."""
    mark = len(nb.iopub)
    nb.run("h = %mcp_task demo:research topic=tides ambiguous=true stage_seconds=0.2")
    comm_id = task_widgets(nb)[-1]["content"]["comm_id"]
    form = form_in(nb, comm_id, since=mark)
    mark = len(nb.iopub)
    bad = {"type": "answer", "id": form["id"], "action": "accept", "content": {"interpretation": "x", "depth": 9}}
    send_over(nb, subshell, comm_id, bad)
    nb.wait(lambda m: any(q["attempts"] == 1 for q in _questions(m, comm_id)), WAIT, "the refusal", since=mark)
    return comm_id, form


def _status_becomes(nb: Notebook, wanted: str) -> str:
    deadline = time.monotonic() + WAIT
    status = ""
    while time.monotonic() < deadline:
        status = nb.kernel.value("h.status")
        if status == wanted:
            break
        time.sleep(0.2)
    return status


def test_cancel_from_a_subshell_cancels_the_task(nb: Notebook) -> None:
    subshell = create_subshell(nb.kernel)
    comm_id, _form = _refused_then(nb, subshell)
    send_over(nb, subshell, comm_id, {"type": "cancel"})
    assert _status_becomes(nb, "cancelled") == "cancelled"


def test_an_answer_from_a_subshell_reaches_the_server(nb: Notebook) -> None:
    subshell = create_subshell(nb.kernel)
    comm_id, form = _refused_then(nb, subshell)
    options = [o[0] for o in form["fields"][0]["options"]]
    good = {"type": "answer", "id": form["id"], "action": "accept", "content": {"interpretation": options[0]}}
    send_over(nb, subshell, comm_id, good)
    assert _status_becomes(nb, "completed") == "completed"
    assert nb.kernel.value("h.answered[0][1:]") == ("person", "accept")


def test_cancel_from_the_side_panel_over_a_subshell_cancels_the_task(nb: Notebook) -> None:
    """The side panel's channel: its hello answered under the subshell's message, its Cancel then handled on
    the subshell's thread."""
    subshell = create_subshell(nb.kernel)
    nb.run("long = %mcp_task demo:slow_compute seconds=30", cell_id="cell-long")
    comm_id = uuid.uuid4().hex
    mark = len(nb.iopub)
    send_over_channel(
        nb, subshell, "comm_open", {"comm_id": comm_id, "target_name": TARGET, "data": {"type": "hello"}}
    )
    entry = task_seen(nb, comm_id, mark, "the long task", tool="slow_compute", cell_id="cell-long")
    send_over_channel(nb, subshell, "comm_msg", {"comm_id": comm_id, "data": {"type": "hello"}})
    nb.wait(
        lambda m: (channel_data(m, comm_id) or {}).get("type") == "snapshot", WAIT, "a snapshot", since=mark + 1
    )
    mark = len(nb.iopub)
    send_over_channel(
        nb, subshell, "comm_msg", {"comm_id": comm_id, "data": {"type": "cancel", "key": entry["key"]}}
    )
    result = nb.wait(
        lambda m: (channel_data(m, comm_id) or {}).get("type") == "cancel_result", WAIT, "the result", since=mark
    )
    assert channel_data(result, comm_id) == {
        "type": "cancel_result",
        "key": entry["key"],
        "ok": True,
        "error": None,
    }
    deadline = time.monotonic() + WAIT
    while nb.kernel.value("long.status") != "cancelled" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert nb.kernel.value("long.status") == "cancelled"


def send_over_channel(nb: Notebook, subshell: str, msg_type: str, content: dict[str, Any]) -> None:
    client = nb.kernel.client
    message = client.session.msg(msg_type, content)
    message["header"]["subshell_id"] = subshell
    client.shell_channel.send(message)
