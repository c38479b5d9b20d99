"""The %mcp_* magics in a real kernel (jupyter_client), against the demo server over stdio.

One kernel serves the whole module (starting kernels is the slow part); it is connected to one
demo server named ``demo`` with a secret env value that must never show.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jupyter.kernel_harness import DEMO_COMMAND, CellRun, Kernel, running_kernel

SECRET = "s3cr3t-token-value"  # an --env value: it must never appear in any output


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    home = tmp_path_factory.mktemp("magics-kernel")
    with running_kernel(home, MTJ_TEST_SECRET="from-the-environment") as kernel:
        kernel.run("%load_ext mcp_tasks_jupyter")
        kernel.notes["connect"] = kernel.run(f"%mcp_connect --env MTJ_TOKEN={SECRET} demo {DEMO_COMMAND}")
        yield kernel


def one_line_usage_error(run: CellRun, *expected: str) -> str:
    """The cell failed with ``UsageError: ...`` on one line, no traceback, mentioning ``expected``."""
    assert run.status == "error", str(run)
    assert run.reply["ename"] == "UsageError", str(run)
    assert not run.errors, f"a traceback was shown: {run.errors}"
    text = run.stderr.strip()
    assert text.startswith("UsageError: ") and "\n" not in text, text
    assert "Traceback" not in text and 'File "' not in text, text
    for part in expected:
        assert part in text, f"{part!r} not in {text!r}"
    return text


def test_connect_reports_and_servers_table_shows_no_secret(kernel: Kernel) -> None:
    connected = kernel.notes["connect"]
    kernel.run("from mcp_tasks_jupyter.jupyter.runtime import get_runtime")
    info = kernel.value(
        "{k: v for k, v in get_runtime().client('demo').describe().items() if k in "
        "('protocol', 'dialect', 'server')}"
    )
    assert (
        f"connected demo: mcp-tasks-jupyter-demo 0.1.0 over stdio, protocol {info['protocol']}, "
        f"tasks: {info['dialect']}" in connected.stdout
    )
    assert SECRET not in json.dumps(connected.messages)
    capabilities = kernel.value(
        "__import__('mcp_tasks_jupyter.jupyter.tables', fromlist=['_'])"
        ".task_capabilities(get_runtime().client('demo').capabilities)"
    )
    assert capabilities != "none"
    run = kernel.run("%mcp_servers")
    text, html = run.displays()[0], run.displays("text/html")[0]
    for shown in (text, html):
        assert "demo" in shown and "stdio" in shown and info["protocol"] in shown
        assert f"{info['dialect']} (" in shown  # the dialect and why it was chosen
        assert capabilities in shown
        assert "env: MTJ_TOKEN" in shown
        assert SECRET not in shown
    # as it ran: the interpreter's path, so that the record can be run again (issue 20)
    interpreter = kernel.value("__import__('sys').executable")
    assert f"{interpreter} -m mcp_tasks_jupyter.demo" in html, html
    assert "<table>" in html


def test_tools_table(kernel: Kernel) -> None:
    run = kernel.run("%mcp_tools demo")
    text, html = run.displays()[0], run.displays("text/html")[0]
    assert "Tools on demo" in text
    for tool in ("slow_compute", "research", "failing_job", "make_chart", "echo"):
        assert tool in text and tool in html
    assert "topic*: string" in text  # research's required argument
    assert "seconds: number = 5" in text
    # without NAME: every connected server
    assert "Tools on demo" in kernel.run("%mcp_tools").displays()[0]


def test_dialect_option_and_task_support_per_connection(kernel: Kernel) -> None:
    kernel.run(f"%mcp_connect classic --dialect 2025-11-25 {DEMO_COMMAND}")
    try:
        text = kernel.run("%mcp_tools classic").displays()[0]
        rows = {line.split()[0]: line for line in text.splitlines()[3:] if line.strip()}
        assert "required (runs as a task)" in rows["research"]
        assert "optional (runs as a task)" in rows["slow_compute"]
        assert "forbidden (plain call)" in rows["echo"]
        servers = kernel.run("%mcp_servers").displays()[0]
        assert "forced by dialect='2025-11-25'" in servers and "tools/call" in servers
    finally:
        kernel.run(
            "from mcp_tasks_jupyter.jupyter.runtime import get_runtime\nawait get_runtime().disconnect('classic')"
        )


def test_task_returns_at_once_and_the_next_cell_runs_while_it_works(kernel: Kernel) -> None:
    started = kernel.run('h = %mcp_task -o res demo:slow_compute seconds=2 label="two words"')
    assert any('slow_compute label="two words" seconds=2 on demo' in d for d in started.displays()), (
        started.displays()
    )
    assert not started.result, "a statement of its own must not show the handle a second time"
    during = kernel.value("(h.done(), h.status, h.task_id is not None, 'res' in dir())")
    assert during == (False, "working", True, False)  # the magic returned while its task works
    kernel.run("import asyncio\nawait asyncio.wait_for(h, 20)", timeout=25)
    assert kernel.value("(h.status, res.structured['label'], res.structured['value'])") == (
        "completed",
        "two words",
        385,
    )


def test_o_binds_the_moment_the_task_completes_without_a_cell_awaiting_it(kernel: Kernel) -> None:
    kernel.run("%mcp_task -o quiet_result demo:slow_compute seconds=0.3 steps=3")
    kernel.run(
        "import asyncio\nfor _i in range(200):\n    if 'quiet_result' in dir(): break\n"
        "    await asyncio.sleep(0.05)"
    )
    assert kernel.value("quiet_result.structured['value']") == 14


def test_o_binds_a_tool_error_result_and_nothing_on_failure(kernel: Kernel) -> None:
    kernel.run(
        "failed = %mcp_task -o tool_error demo:failing_job seconds=0.1\n"
        "import asyncio\nawait asyncio.wait_for(failed, 20)"
    )
    # a tool error is a result: bound, so the next cell meets it rather than a NameError (issue 30)
    assert kernel.value("(failed.status, tool_error.is_error, tool_error is failed.result())") == (
        "error",
        True,
        True,
    )
    kernel.run(
        "raised = %mcp_task -o nothing demo:failing_job seconds=0.1 mode=protocol_error\n"
        "await asyncio.wait([asyncio.ensure_future(raised)], timeout=20)"
    )
    assert kernel.value("(raised.status, 'nothing' in dir())") == ("failed", False)
    # ... and its view says why the next cell will not find it
    kernel.run("from mcp_tasks_jupyter.views.view import failure_message")
    assert "nothing stays unbound: the task ended without a result" in kernel.value("failure_message(raised)")


def test_wait_returns_the_result_while_the_loop_stays_free(kernel: Kernel) -> None:
    kernel.run(
        "import asyncio\nticks = 0\nasync def tick():\n    global ticks\n    while True:\n"
        "        ticks += 1\n        await asyncio.sleep(0.05)\nticker = asyncio.ensure_future(tick())"
    )
    run = kernel.run(
        "before = ticks\nr = %mcp_task --wait demo:make_chart values=[3, 1, 2] title='Three bars'\n"
        "during = ticks - before\nticker.cancel()\nr"
    )
    assert "Three bars" in run.result or "ToolResult" in run.result
    assert kernel.value("(r.structured['count'], r.structured['title'], r.is_error)") == (3, "Three bars", False)
    assert kernel.value("during") >= 3, "background jobs did not run while the cell waited"


def test_name_may_be_left_out_with_one_server(kernel: Kernel) -> None:
    kernel.run("echoed = %mcp_task --wait echo text='said with spaces'")
    assert kernel.value("echoed.text") == "said with spaces"


def test_values_expand_from_the_namespace(kernel: Kernel) -> None:
    kernel.run("chart_title = 'from a variable'\nnums = [4, 5]")
    kernel.run('x = %mcp_task --wait demo:make_chart values={nums} title="$chart_title"')
    assert kernel.value("(x.structured['title'], x.structured['count'])") == ("from a variable", 2)


def test_cell_magic_with_a_yaml_body(kernel: Kernel) -> None:
    run = kernel.run(
        "%%mcp_task --wait demo:make_chart\n# arguments in YAML\nvalues:\n  - 1\n  - 2\n  - 4\ntitle: From YAML\n"
    )
    assert "ToolResult" in run.result
    structured = kernel.value("Out[max(Out)].structured")
    assert (structured["title"], structured["count"], structured["min"], structured["max"]) == (
        "From YAML",
        3,
        1,
        4,
    )


def test_cell_magic_binds_and_answers_the_tasks_question(kernel: Kernel) -> None:
    answers = json.dumps({"interpretation": "tides (history)", "depth": 3})
    kernel.run(
        f"%%mcp_task -o report --answers '{answers}' demo:research\n"
        "topic: tides\nambiguous: true\nstage_seconds: 0.05\n"
    )
    kernel.run(
        "import asyncio\nfrom mcp_tasks_jupyter.jupyter.runtime import get_runtime\n"
        "await asyncio.wait_for(get_runtime().handles[-1], 20)"
    )
    assert kernel.value("(report.structured['interpretation'], report.structured['depth'])") == (
        "tides (history)",
        3,
    )


def test_cancel_by_variable_and_by_id(kernel: Kernel) -> None:
    kernel.run("long1 = %mcp_task demo:slow_compute seconds=60\nlong2 = %mcp_task demo:slow_compute seconds=60")
    run = kernel.run("%mcp_cancel long1")
    assert "cancelled" in run.stdout
    task_id = kernel.value("long2.task_id")
    assert "cancelled" in kernel.run(f"%mcp_cancel demo:{task_id}").stdout
    kernel.run(
        "import asyncio\nfor h_ in (long1, long2):\n    await asyncio.wait(\n"
        "        [asyncio.ensure_future(h_)], timeout=20)"
    )
    assert kernel.value("(long1.status, long2.status)") == ("cancelled", "cancelled")
    one_line_usage_error(kernel.run("%mcp_cancel ticks", ok=False), "%mcp_cancel", "ticks is a int")


def test_result_by_task_id(kernel: Kernel) -> None:
    kernel.run("t = %mcp_task demo:slow_compute seconds=0.5 label=by-id")
    task_id = kernel.value("t.task_id")
    run = kernel.run(f"%mcp_result demo:{task_id} -o by_id", timeout=25)  # NAME:ID: an id may start with "-"
    assert "by-id: done in 10 steps" in run.result
    assert kernel.value("by_id.structured['label']") == "by-id"
    # a task this kernel does not know yet is picked up on the server
    kernel.run(
        f"from mcp_tasks_jupyter.jupyter.runtime import get_runtime\n"
        f"get_runtime().handles.remove(t)\nget_runtime().client('demo').tasks.pop('{task_id}', None)"
    )
    again = kernel.run(f"again = %mcp_result demo:{task_id}", timeout=25)
    assert again.status == "ok"
    assert kernel.value("(again is not t, again.structured['label'])") == (True, "by-id")


def test_errors_are_one_line_without_traceback(kernel: Kernel) -> None:
    one_line_usage_error(
        kernel.run("%mcp_task demo:no_such_tool", ok=False),
        "demo:no_such_tool",
        "no tool named 'no_such_tool'",
        "slow_compute",
    )
    one_line_usage_error(
        kernel.run("%mcp_task other:slow_compute", ok=False),
        "other:slow_compute",
        "no server named 'other'",
        "connected: demo",
    )
    one_line_usage_error(
        kernel.run("h_missing = %mcp_task demo:research", ok=False), "demo:research", "needs argument(s) topic"
    )
    one_line_usage_error(
        kernel.run("%mcp_task demo:slow_compute seconds", ok=False), "expected key=value", "'seconds'"
    )
    one_line_usage_error(
        kernel.run("%mcp_task demo:slow_compute seconds=abc", ok=False), "demo:slow_compute"
    )  # the server rejects the type: still one line
    one_line_usage_error(kernel.run("%mcp_task --bogus demo:echo text=x", ok=False), "unknown option '--bogus'")
    one_line_usage_error(
        kernel.run("%%mcp_task demo:echo\n- a\n- list\n", ok=False), "%%mcp_task demo:echo", "must be a mapping"
    )
    one_line_usage_error(kernel.run("%mcp_result demo:no-such-task", ok=False), "no-such-task")
    one_line_usage_error(
        kernel.run("%mcp_connect broken /no/such/program", ok=False), "%mcp_connect broken", "command not found"
    )
    one_line_usage_error(
        kernel.run("%mcp_connect nowhere", ok=False),
        "%mcp_connect nowhere",
        "no server named 'nowhere'",
        "mcp.json",
    )
    assert "h_missing" not in kernel.value("dir()")


def test_connect_from_mcp_json_with_env_expansion(kernel: Kernel, tmp_path: Path) -> None:
    cwd = Path(kernel.value("__import__('os').getcwd()"))
    (cwd / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fromfile": {
                        "command": "${env:MTJ_PYTHON}",
                        "args": ["-m", "mcp_tasks_jupyter.demo"],
                        "env": {"DEMO_TOKEN": "${env:MTJ_TEST_SECRET}"},
                    }
                }
            }
        )
    )
    kernel.run("import os, sys\nos.environ['MTJ_PYTHON'] = sys.executable")
    try:
        run = kernel.run("%mcp_connect fromfile")
        assert "connected fromfile" in run.stdout
        table = kernel.run("%mcp_servers").displays()[0]
        assert "${env:MTJ_PYTHON} -m mcp_tasks_jupyter.demo" in table  # as written, not expanded
        assert "env: DEMO_TOKEN" in table and "mcp.json" in kernel.run("%mcp_servers").displays("text/html")[0]
        assert "from-the-environment" not in table
        assert kernel.run("r = %mcp_task --wait fromfile:echo text=hi").status == "ok"
        one_line_usage_error(kernel.run("%mcp_task --wait echo text=x", ok=False), "several servers")
    finally:
        kernel.run(
            "from mcp_tasks_jupyter.jupyter.runtime import get_runtime\n"
            "if 'fromfile' in get_runtime().clients:\n    await get_runtime().disconnect('fromfile')"
        )
        (cwd / "mcp.json").unlink()


def test_servers_config_lists_every_configured_server_and_its_file(kernel: Kernel) -> None:
    cwd = Path(kernel.value("__import__('os').getcwd()"))
    (cwd / ".vscode").mkdir(exist_ok=True)
    vscode = cwd / ".vscode" / "mcp.json"
    vscode.write_text(
        json.dumps(
            {
                "servers": {
                    "fromvscode": {
                        "type": "http",
                        "url": "http://127.0.0.1:9/mcp",
                        "headers": {"Authorization": "Bearer ${env:MTJ_TEST_SECRET}"},
                    }
                }
            }
        )
    )
    try:
        run = kernel.run("%mcp_servers --config")
        text, html = run.displays()[0], run.displays("text/html")[0]
        assert "fromvscode" in text and str(vscode) in text and "VS Code" in text and "used" in text
        assert "<table>" in html and "from-the-environment" not in text + html
    finally:
        vscode.unlink()
    one_line_usage_error(kernel.run("%mcp_servers --bogus", ok=False), "takes no arguments but --config")


def test_tasks_export_writes_the_provenance_of_the_kernels_tasks(kernel: Kernel, tmp_path: Path) -> None:
    kernel.run("exported = %mcp_task demo:slow_compute seconds=0.1 label=exported")
    kernel.run("await exported")
    path = tmp_path / "provenance.jsonl"
    run = kernel.run(f"%mcp_tasks demo --export {path}")
    assert run.status == "ok", str(run)
    count = int(run.stdout.split("of ")[1].split(" task")[0])
    assert f"to {path}" in run.stdout and count >= 1
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == count and {row["server"] for row in rows} == {"demo"}
    [row] = [r for r in rows if r["arguments"].get("label") == "exported"]
    assert row["status"] == "completed" and row["transport"] == "stdio" and len(row["result_sha256"]) == 64
    assert row["server_software"] == "mcp-tasks-jupyter-demo" and SECRET not in path.read_text()
    one_line_usage_error(kernel.run("%mcp_tasks --export", ok=False), "--export needs a value")


def test_tasks_board(kernel: Kernel) -> None:
    run = kernel.run("%mcp_tasks")
    assert any("BoardWidget" in d for d in run.displays()), run.displays()
    assert kernel.run("%mcp_tasks demo --status completed").status == "ok"
    one_line_usage_error(kernel.run("%mcp_tasks --status finished", ok=False), "unknown status 'finished'")
    one_line_usage_error(kernel.run("%mcp_tasks elsewhere", ok=False), "no server named 'elsewhere'")


def test_no_output_ever_carried_the_secret(kernel: Kernel) -> None:
    run = kernel.run("%mcp_servers\n%mcp_tools")
    assert SECRET not in json.dumps(run.messages)


def test_inside_a_function_the_magic_returns_something_to_await(kernel: Kernel) -> None:
    kernel.run(
        "async def echo_twice(text):\n"
        "    pending = get_ipython().run_line_magic('mcp_task', f'--wait demo:echo text={text}')\n"
        "    return repr(pending).startswith('<pending demo:echo'), (await pending).text * 2\n"
        "pair = await echo_twice('ab')"
    )
    assert kernel.value("pair") == (True, "abab")


def test_reload_and_reset_keep_connections_and_magics_working(kernel: Kernel) -> None:
    kernel.run("%reload_ext mcp_tasks_jupyter")
    assert "demo" in kernel.run("%mcp_servers").displays()[0]
    kernel.run("%reset -f")
    kernel.run("after = %mcp_task --wait demo:echo text=after-reset")
    assert kernel.value("after.text") == "after-reset"


def test_tables_escape_server_text() -> None:
    from mcp_tasks_jupyter.jupyter.tables import tools_table
    from mcp_tasks_jupyter.protocol.types import Tool

    hostile = '<script>alert("x")</script>'
    tool = Tool.model_validate(
        {
            "name": hostile,
            "description": hostile,
            "inputSchema": {"type": "object", "properties": {hostile: {"type": "string"}}},
        }
    )
    table = tools_table(hostile, [tool])
    bundle = table._repr_mimebundle_()
    assert "<script>" not in bundle["text/html"] and "&lt;script&gt;" in bundle["text/html"]
    assert hostile in bundle["text/plain"]


def test_a_task_that_fails_while_a_magic_waits_ends_the_cell_with_its_own_error_on_one_line(
    kernel: Kernel,
) -> None:
    run = kernel.run("r_fail = %mcp_task --wait demo:failing_job seconds=0.1 mode=protocol_error", ok=False)
    assert run.status == "error" and run.reply["ename"] == "TaskFailed", str(run)  # no usage error of the user's
    assert not run.errors, f"a traceback was shown: {run.errors}"
    text = run.stderr.strip()
    assert text.startswith("TaskFailed: demo:failing_job (task ") and "\n" not in text, text
    assert "The job failed on purpose" in text and "(JSON-RPC error -32" in text, text
    assert text.count("failing_job") == 1, f"the tool is named twice: {text}"
    # it is the task's own error: code can catch it
    caught = kernel.run(
        "import mcp_tasks_jupyter as mtj\ntry:\n"
        "    %mcp_task --wait demo:failing_job seconds=0.1 mode=protocol_error\n"
        "except mtj.TaskFailed as exc:\n    caught_code = exc.error['code']"
    )
    assert caught.status == "ok" and kernel.value("caught_code") < 0
