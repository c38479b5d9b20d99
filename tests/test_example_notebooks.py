"""The example notebooks open clean (issue 15, item 9) and ``make demo`` explains itself (item 10):
consistent kernelspec metadata (what the kernel itself reports, so JupyterLab has nothing to change
on opening), checkpoints ignored, and run.py's tool lists whole and its closing summary."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _run_module():
    spec = importlib.util.spec_from_file_location("notebooks_run", ROOT / "notebooks" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_notebook_carries_the_kernels_own_kernelspec(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    kernel = KernelSpecManager().get_kernel_spec("python3")
    assert notebook.metadata.kernelspec == {
        "display_name": kernel.display_name,
        "language": kernel.language,
        "name": "python3",
    }
    assert all("id" in cell for cell in notebook.cells)  # nbformat 4.5: nothing to add on opening


def test_checkpoints_are_ignored() -> None:
    assert ".ipynb_checkpoints/" in (ROOT / ".gitignore").read_text().splitlines()


def test_run_prints_tool_lists_whole_and_ends_with_a_summary() -> None:
    run = _run_module()
    long = "x" * 300
    data = {
        "text/plain": "Tools on demo\ntool  task support ...",
        "text/html": "<div><table><thead><tr><th>tool</th><th>task support</th><th>arguments</th>"
        f"<th>description</th></tr></thead><tbody><tr><td>slow</td><td>optional</td><td>n: int</td><td>{long}</td>"
        "</tr></tbody></table></div>",
    }
    assert run._shown({"output_type": "display_data", "data": data}) == [
        "Tools on demo (1 tools)",
        "  slow  (optional)",
        "      arguments: n: int",
        f"      {long}",
    ]
    widget = {"text/plain": "<TaskHandle slow on demo: working>", run.WIDGET: {"model_id": "x"}}
    assert run._shown({"output_type": "display_data", "data": widget}) == []
    text = run.summary({ROOT / "notebooks" / "01-quickstart.ipynb": (True, 2.0), ROOT / "b.ipynb": (False, 1.0)})
    assert "Ran 2 notebooks in 3 s: 1 ok, FAILED: b.ipynb" in text
    assert "The executed copies, with every output, are in build/notebooks/" in text
    assert "make lab" in text
    json.dumps(text)


def test_run_names_each_cell_by_its_first_line_of_code_and_knows_jupyterlab_is_here() -> None:
    run = _run_module()
    assert run.headline("# fan out\nhandles = mtj.map(\n    demo,\n)\n") == "handles = mtj.map( …"
    assert run.headline("%mcp_tasks") == "%mcp_tasks"
    assert run.headline("x = '" + "y" * 100 + "'").endswith("…")
    installed = run.summary({ROOT / "notebooks" / "01-quickstart.ipynb": (True, 2.0)}, lab=True)
    assert (
        "installs JupyterLab" not in installed and "jupyter lab build/notebooks/01-quickstart.ipynb" in installed
    )
    missing = run.summary({ROOT / "notebooks" / "01-quickstart.ipynb": (True, 2.0)}, lab=False)
    assert "make lab" in missing and "installs JupyterLab" in missing


def test_run_reads_a_board_by_its_saved_table_and_aligns_the_next_steps() -> None:
    from mcp_tasks_jupyter.views.html import board_html

    run = _run_module()
    rows = [
        {"status": status, "tool": "slow", "server": "demo", "live": True, "started": 1.0, "finished": 2.0}
        for status in ("completed", "completed", "failed")
    ]
    board = {
        "text/plain": "<BoardWidget of 3 tasks>",
        "text/html": board_html(rows),
        run.WIDGET: {"model_id": "x"},
    }
    assert run._shown({"output_type": "display_data", "data": board}) == [
        "BoardWidget of 3 tasks: 2 completed, 1 failed"
    ]
    steps = run.summary({ROOT / "notebooks" / "01-quickstart.ipynb": (True, 2.0)}, lab=True).splitlines()[-2:]
    assert len({line.index("#") for line in steps}) == 1, steps


def test_run_keeps_a_tables_header_above_its_columns() -> None:
    run = _run_module()
    frame = "\n     tool  status\n0    slow  completed\n1  echo    error\n\n"
    shown = run._shown({"output_type": "execute_result", "data": {"text/plain": frame}})
    assert shown == ["     tool  status", "0    slow  completed", "1  echo    error"]
    assert shown[0].index("status") == shown[1].index("completed")  # as pandas aligned them


def test_run_narrates_each_markdown_cell_by_its_first_sentence() -> None:
    run = _run_module()
    said = "A kernel restart drops the connection (the task goes on at the server). Here we drop it by hand."
    assert run.narration(said) == "A kernel restart drops the connection (the task goes on at the server)."
    assert (
        run.narration("# Durable tasks: resume and `cache`\n\nEvery task...") == "Durable tasks: resume and cache"
    )
    assert run.narration("x" * 300).endswith("…")
