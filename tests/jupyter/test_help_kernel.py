"""Help while typing (issue 15, item 6), in a real kernel: Tab completion of the ``%mcp_*`` magics
through the kernel's ``complete_request`` (what JupyterLab sends), unknown argument names refused
with a "did you mean" before anything is sent, ``%mcp_task?`` as plain text, and ``%mcp_cancel`` /
``%mcp_result`` of an id nobody knows: one line, no phantom task left behind."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.jupyter.kernel_harness import CELL_TIMEOUT, DEMO_COMMAND, Kernel, running_kernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    with running_kernel(tmp_path_factory.mktemp("help")) as kernel:
        kernel.run("%load_ext mcp_tasks_jupyter\nfrom mcp_tasks_jupyter.jupyter.runtime import get_runtime")
        kernel.run(f"%mcp_connect demo {DEMO_COMMAND}")
        yield kernel


def complete(kernel: Kernel, code: str, cursor: int | None = None) -> tuple[str, list[str]]:
    """(the text the completions replace, the completions) for ``code`` with the cursor at ``cursor``."""
    cursor = len(code) if cursor is None else cursor
    msg_id = kernel.client.complete(code, cursor)
    deadline = time.monotonic() + CELL_TIMEOUT
    while True:
        reply: dict[str, Any] = kernel.client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    content = reply["content"]
    assert content["status"] == "ok", content
    return code[content["cursor_start"] : content["cursor_end"]], content["matches"]


def test_tab_completes_names_tools_and_argument_keys(kernel: Kernel) -> None:
    assert complete(kernel, "h = %mcp_task de") == ("de", ["demo:"])
    # the first Tab on a connection whose tools were never listed asks for them in the background
    complete(kernel, "h = %mcp_task demo:slow")
    kernel.run(
        "import asyncio\n"
        "for _ in range(400):  # 20 s at most\n"
        "    if get_runtime().client('demo').cached_tools is not None: break\n"
        "    await asyncio.sleep(0.05)"
    )
    assert complete(kernel, "h = %mcp_task demo:slow") == ("demo:slow", ["demo:slow_compute"])
    assert complete(kernel, "h = %mcp_task --wa")[1] == ["--wait"]
    assert complete(kernel, "h = %mcp_task -o r demo:slow_compute se") == ("se", ["seconds="])
    assert complete(kernel, "h = %mcp_task demo:slow_compute seconds=2 ")[1] == ["steps=", "label="]
    # the cell magic: its first line, and "key: " in its body
    assert complete(kernel, "%%mcp_task demo:slow_compute s")[1] == ["seconds=", "steps="]
    assert complete(kernel, "%%mcp_task demo:slow_compute\nseconds: 2\nst")[1] == ["steps: "]
    # completion in the middle of a cell, the cursor before later text
    code = "x = 1\nh = %mcp_task demo:slow_compute la\nprint(x)"
    assert complete(kernel, code, code.index("la\n") + 2)[1] == ["label="]
    # %mcp_cancel, %mcp_result: handle variables and NAME:TASK_ID of known tasks; with none, nothing
    # (not IPython's generic list of every name; issue 30)
    assert [m for m in complete(kernel, "%mcp_cancel ")[1] if m] == []
    assert complete(kernel, "%mcp_cancel pri")[1] == ["pri"]  # the fragment as it is: nothing changes
    kernel.run("running = %mcp_task demo:slow_compute seconds=30")
    task_id = kernel.value("running.task_id")
    _, matches = complete(kernel, "%mcp_cancel ")
    assert "running" in matches and f"demo:{task_id}" in matches and "print" not in matches
    assert complete(kernel, "%mcp_result ru")[1] == ["running"]
    kernel.run("await running.cancel()")
    assert "running" not in complete(kernel, "%mcp_cancel ")[1]  # only running tasks can be cancelled
    assert complete(kernel, "%mcp_tools d")[1] == ["demo"]
    # outside the magics, Python completion is untouched
    assert "print" in complete(kernel, "pri")[1]


def test_an_unknown_argument_name_is_refused_before_sending(kernel: Kernel) -> None:
    before = kernel.value("len(get_runtime().handles)")
    run = kernel.run("h = %mcp_task demo:slow_compute secs=2", ok=False)
    assert run.status == "error" and run.reply["ename"] == "UsageError"
    assert run.stderr.strip() == (
        "UsageError: demo:slow_compute: tool 'slow_compute' has no argument 'secs' "
        "(did you mean 'seconds' or 'steps'?); its arguments: seconds, steps, label"
    )
    assert kernel.value("len(get_runtime().handles)") == before


def test_magic_help_is_plain_text(kernel: Kernel) -> None:
    msg_id = kernel.client.inspect("%mcp_task", len("%mcp_task"), detail_level=0)
    deadline = time.monotonic() + CELL_TIMEOUT
    while True:
        reply = kernel.client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    text = reply["content"]["data"]["text/plain"]
    assert "Start a tool as a task" in text and "--wait" in text
    for markup in ("``", "::", ":func:", ":class:"):
        assert markup not in text, markup


@pytest.mark.parametrize("magic", ["mcp_cancel", "mcp_result"])
def test_an_unknown_task_id_says_so_and_leaves_no_phantom(kernel: Kernel, magic: str) -> None:
    before = kernel.value("len(get_runtime().handles)")
    run = kernel.run(f"%{magic} demo:no-such-task", ok=False)
    assert run.status == "error" and run.reply["ename"] == "UsageError", str(run)
    said = run.stderr + str(run.reply)
    assert "no task 'no-such-task' on demo: neither this kernel nor the server knows it" in said
    assert kernel.value("len(get_runtime().handles)") == before
    rows = kernel.value("[r.task_id for r in get_runtime().client('demo').index.records()]")
    assert "no-such-task" not in rows
