"""Which notebook a headless run's kernel runs (``index/notebook_run.py``): read from the command that
started the kernel (papermill, nbconvert, nbclient's ``jupyter execute``, any program given notebooks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_tasks_jupyter.index.notebook_run import NotebookRun, notebook_run, run_of

HOME = Path("/home/ada/study")
PYTHON = "/home/ada/.venv/bin/python"


@pytest.mark.parametrize(
    ("argv", "kernel_cwd", "run"),
    [
        (
            [PYTHON, "/home/ada/.venv/bin/papermill", "in.ipynb", "out/run.ipynb", "-y", "topics: [tides]"],
            HOME,
            NotebookRun(str(HOME / "in.ipynb"), "papermill", str(HOME / "out/run.ipynb")),
        ),
        (
            ["papermill", "-p", "a", "1", "-k", "python3", "--cwd", "/tmp", "../nb.ipynb", "/abs/out.ipynb"],
            Path("/tmp"),
            NotebookRun("/home/ada/nb.ipynb", "papermill", "/abs/out.ipynb"),
        ),
        (
            [PYTHON, "-m", "papermill", "--log-output", "--parameters_file=p.yaml", "nb.ipynb", "s3://b/o.ipynb"],
            HOME,
            NotebookRun(str(HOME / "nb.ipynb"), "papermill", "s3://b/o.ipynb"),
        ),
        (
            [PYTHON, "/usr/bin/jupyter-nbconvert", "--to", "notebook", "--execute", "a/x.ipynb", "b/y.ipynb"],
            HOME / "b",
            NotebookRun(str(HOME / "b/y.ipynb"), "nbconvert"),
        ),
        (
            [PYTHON, "/usr/bin/jupyter-execute", "x.ipynb"],
            Path("/elsewhere"),
            NotebookRun(str(HOME / "x.ipynb"), "nbclient"),
        ),
        (
            [PYTHON, "-m", "pytest", "-p", "no:randomly", "notebooks/09-papermill.ipynb"],
            HOME / "notebooks",
            NotebookRun(str(HOME / "notebooks/09-papermill.ipynb"), "pytest"),
        ),
    ],
)
def test_the_command_that_started_the_kernel_names_its_notebook(
    argv: list[str], kernel_cwd: Path, run: NotebookRun
) -> None:
    assert run_of(argv, HOME, kernel_cwd) == run
    assert NotebookRun.from_json(run.as_json()) == run


@pytest.mark.parametrize(
    "argv",
    [
        [PYTHON, "/home/ada/.venv/bin/papermill", "only-one.ipynb"],
        [PYTHON, "-m", "pytest", "tests/"],
        [PYTHON, "/usr/bin/jupyter-nbconvert", "--execute", "a/x.ipynb", "b/y.ipynb"],  # neither in the cwd
        [],
    ],
)
def test_a_command_that_does_not_say_names_no_notebook(argv: list[str]) -> None:
    assert run_of(argv, HOME, Path("/nowhere")) is None


def test_papermills_injected_paths_name_the_notebook(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    from mcp_tasks_jupyter.index.notebook_run import notebook_run

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    main = sys.modules["__main__"]
    monkeypatch.setattr(main, "PAPERMILL_INPUT_PATH", str(tmp_path / "in.ipynb"), raising=False)
    monkeypatch.setattr(main, "PAPERMILL_OUTPUT_PATH", str(tmp_path / "out.ipynb"), raising=False)
    assert notebook_run() == NotebookRun(str(tmp_path / "in.ipynb"), "papermill", str(tmp_path / "out.ipynb"))
    monkeypatch.setenv("JPY_SESSION_NAME", "lab.ipynb")  # a Jupyter server's kernel: it says
    assert notebook_run() is None


def test_a_program_running_notebooks_through_nbclients_api_names_them_by_mtj_notebook(monkeypatch, tmp_path):
    """nbclient's API tells the kernel nothing: the program sets MTJ_NOTEBOOK (make demo does)."""
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MTJ_NOTEBOOK", "study.ipynb")
    assert notebook_run() == NotebookRun(str(tmp_path / "study.ipynb"), "nbclient")
    monkeypatch.setenv("MTJ_NOTEBOOK_RUNNER", "my-runner")
    assert notebook_run() == NotebookRun(str(tmp_path / "study.ipynb"), "my-runner")
    monkeypatch.setenv("JPY_SESSION_NAME", "/lab/opened.ipynb")  # a Jupyter server's kernel: it says
    assert notebook_run() is None
