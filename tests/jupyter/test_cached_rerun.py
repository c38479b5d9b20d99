"""Issue 6's done-when: re-running a cached notebook finishes without running its tasks again."""

from __future__ import annotations

from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

CELLS = [
    "%load_ext mcp_tasks_jupyter\nfrom mcp_tasks_jupyter.jupyter import get_runtime",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo",
    "r = %mcp_task --wait --cache demo:slow_compute seconds=0.5 steps=6 label=kept",
    "print([h.cached for h in get_runtime().handles], r.structured['value'])",
]


def run_once(path) -> str:
    notebook = new_notebook(cells=[new_code_cell(c) for c in CELLS])
    NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(path)}}
    ).execute()
    return notebook.cells[-1].outputs[0]["text"].strip()


def test_second_run_is_served_from_the_index(tmp_path, monkeypatch):
    monkeypatch.setenv("MTJ_INDEX", str(tmp_path / "tasks.sqlite3"))
    assert run_once(tmp_path) == "[False] 91"  # the first run computes
    assert run_once(tmp_path) == "[True] 91"  # the re-run reads the stored result: no task is started
