"""``%%mcp_map`` and ``%mcp_map --over`` in a real kernel (jupyter_client), against the demo over stdio:
one grouped widget for the batch, the Batch at once, ``-o`` bound once every task ended."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.jupyter.kernel_harness import DEMO_COMMAND, Kernel, running_kernel

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    home = tmp_path_factory.mktemp("map-kernel")
    with running_kernel(home) as kernel:
        kernel.run("%load_ext mcp_tasks_jupyter\nimport asyncio\nimport mcp_tasks_jupyter as mtj")
        kernel.run(f"%mcp_connect demo {DEMO_COMMAND}")
        yield kernel


def test_cell_magic_shows_one_widget_and_binds_the_results_in_order(kernel: Kernel) -> None:
    started = kernel.run(
        "%%mcp_map -o reports --limit 2 demo:research\n"
        '- {topic: tides, stage_seconds: 0.05}\n- {topic: "wind farms", stage_seconds: 0.05}\n'
        "- {topic: glaciers, stage_seconds: 0.05}\n"
    )
    outputs = [c for t, c in started.messages if t == "display_data"]
    assert len(outputs) == 1, "one output for the batch: not one per task, no second summary box"
    data = outputs[0]["data"]
    assert WIDGET in data, "the grouped widget is in it"
    # The summary that survives saving rides in the same output (its text replaces the widget's).
    assert data["text/plain"] == "research on demo: 3 tasks…"
    assert "mtj-batch-summary" in data["text/html"]
    assert not started.result, "a statement of its own shows the widget only"
    # Every task is tracked by the runtime (the board, the sidebar): the three newest handles.
    kernel.run("from mcp_tasks_jupyter.jupyter import get_runtime\nmine = get_runtime().handles[-3:]")
    assert kernel.value("([h.arguments['topic'] for h in mine], 'reports' in dir())") == (
        ["tides", "wind farms", "glaciers"],
        False,
    )
    gathered = kernel.run("await mtj.gather(*mine, timeout=20)", timeout=25)
    later = kernel.run("for _i in range(100):\n    if 'reports' in dir(): break\n    await asyncio.sleep(0.05)")
    # The same one output is brought up to date (also inside a later cell, for nbclient/papermill).
    ends = [c["data"] for t, c in gathered.messages + later.messages if t == "update_display_data"]
    assert any(WIDGET in d and d["text/plain"] == "research on demo: 3 tasks — 3 completed" for d in ends), ends
    assert kernel.value("[r.structured['topic'] for r in reports]") == ["tides", "wind farms", "glaciers"]


def test_line_magic_gives_the_batch_at_once_with_the_rest_queued(kernel: Kernel) -> None:
    kernel.run("topics = ['a', 'b', 'c', 'd']")
    kernel.run(
        "batch = %mcp_map --limit 1 demo:research --over [{'topic': t, 'stage_seconds': 0.05} for t in topics]"
    )
    assert kernel.value("(type(batch).__name__, [h.status for h in batch])") == (
        "Batch",
        ["working", "queued", "queued", "queued"],
    )
    results = kernel.value("[r.structured['topic'] for r in await batch.gather(timeout=20)]", timeout=25)
    assert results == ["a", "b", "c", "d"]


def test_line_magic_over_an_expression_and_failures_in_place(kernel: Kernel) -> None:
    kernel.run("modes = ['tool_error', 'protocol_error']")
    kernel.run("fails = %mcp_map -o outcomes demo:failing_job --over [{'seconds': 0, 'mode': m} for m in modes]")
    kernel.run("await fails.wait(timeout=20, return_exceptions=True)", timeout=25)
    kernel.run("for _i in range(100):\n    if 'outcomes' in dir(): break\n    await asyncio.sleep(0.05)")
    assert kernel.value("(outcomes[0].is_error, type(outcomes[1]).__name__)") == (True, "TaskFailed")


def test_mistakes_fail_the_cell_with_one_line(kernel: Kernel) -> None:
    for code, expected in (
        ("%mcp_map demo:research", "--over"),
        ("%%mcp_map demo:research\n{topic: tides}\n", "must be a list of argument mappings"),
        ("%%mcp_map demo:research\n- {ambiguous: true}\n", "map item 0: tool 'research' needs argument(s) topic"),
        ("%mcp_map --limit 0 demo:research --over []", "--limit needs a whole number"),
        ("%mcp_map demo:research --over undefined_name", "NameError"),
        ("%mcp_map nowhere:research --over [{'topic': 'a'}]", "no server named 'nowhere'"),
    ):
        run = kernel.run(code, ok=False)
        assert run.status == "error" and run.reply["ename"] == "UsageError", str(run)
        assert not run.errors and "\n" not in run.stderr.strip(), str(run)
        assert expected in run.stderr, f"{expected!r} not in {run.stderr!r}"


def test_reload_keeps_the_map_magic(kernel: Kernel) -> None:
    kernel.run("%reload_ext mcp_tasks_jupyter")
    assert kernel.value("'mcp_map' in get_ipython().magics_manager.magics['cell']") is True
