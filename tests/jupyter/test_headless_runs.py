"""A notebook run headless (papermill, nbconvert, nbclient's ``jupyter execute``), as a shell runs them:
each task it starts is recorded with its notebook (papermill's input, and its output beside it), and the
run's log says nothing about a comm target nobody there handles (issue 34 item 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from mcp_tasks_jupyter.index.notebook_run import NotebookRun
from mcp_tasks_jupyter.index.task_index import TaskIndex
from tests.support.processes import python_env

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

CELLS = (
    "%load_ext mcp_tasks_jupyter\nimport sys",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo",
    "result = %mcp_task --wait demo:slow_compute seconds=0.2 steps=2\nassert not result.is_error, result",
)
RUN_TIMEOUT_S = 150


def study(where: Path) -> Path:
    where.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = where / "study.ipynb"
    nbformat.write(notebook, path)
    return path


def run(argv: list[str], cwd: Path, index: Path) -> subprocess.CompletedProcess[str]:
    env = python_env()
    env.pop("JPY_SESSION_NAME", None)
    env["MTJ_INDEX"] = str(index)
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.parametrize("runner", ["papermill", "nbconvert", "nbclient"])
def test_a_headless_run_records_its_notebook_and_logs_no_unhandled_comm(runner: str, tmp_path: Path) -> None:
    notebook = study(tmp_path / "studies")
    index = tmp_path / "tasks.sqlite3"
    if runner == "papermill":
        argv = [sys.executable, "-m", "papermill", "studies/study.ipynb", "out/run.ipynb", "--log-output"]
        (tmp_path / "out").mkdir()
        expected = NotebookRun(str(notebook), "papermill", str(tmp_path / "out" / "run.ipynb"))
    elif runner == "nbconvert":
        argv = [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "studies/study.ipynb"]
        expected = NotebookRun(str(notebook), "nbconvert")
    else:
        argv = [str(Path(sys.executable).parent / "jupyter-execute"), "studies/study.ipynb"]
        expected = NotebookRun(str(notebook), "nbclient")
    done = run(argv, tmp_path, index)
    assert "No handler found for comm target" not in done.stderr + done.stdout
    assert "mcp_tasks_jupyter.tasks" not in done.stderr + done.stdout
    [record] = TaskIndex(index).records()
    assert record.status == "completed"
    assert (record.notebook, record.notebook_run) == (str(notebook), expected)
