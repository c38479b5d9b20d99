"""Which notebook this kernel runs, also when nobody opened it in JupyterLab: papermill, nbconvert, nbclient.

A Jupyter server tells its kernels their notebook (``JPY_SESSION_NAME``, also ipykernel's ``__session__``);
the headless runners tell them nothing: papermill injects its parameters but not its paths (unless asked
with ``--inject-paths``), nbclient and nbconvert only start the kernel in the notebook's directory (their
``resources["metadata"]["path"]``), and the connection file's ``jupyter_session`` is the same empty
``JPY_SESSION_NAME``. What does name the notebook is the command that started the run: the kernel's parent
process (jupyter_client starts the kernel as its child). Its command line and working directory are read
from ``/proc`` (Linux; elsewhere a headless run stays without a notebook, as before):

- ``papermill INPUT OUTPUT [options]`` (also ``python -m papermill``): the input notebook is the notebook,
  and the output notebook is kept beside it (:attr:`NotebookRun.output`);
- ``jupyter nbconvert --execute A.ipynb``, ``jupyter execute A.ipynb`` (nbclient's command) and any other
  program given notebooks (``pytest --nbval A.ipynb``): the notebook among its ``.ipynb`` arguments whose
  directory is the kernel's working directory (one argument needs no such match).

papermill's Python API (``papermill.execute_notebook`` in a script or a test) leaves no command that names
the notebook: there, run it with ``inject_paths=True`` (the command's ``--inject-paths``), and the
``PAPERMILL_INPUT_PATH`` and ``PAPERMILL_OUTPUT_PATH`` it injects into the notebook's namespace are read.
nbclient's Python API (``NotebookClient(nb).execute()``) names nothing either: a program that runs
notebooks so sets ``MTJ_NOTEBOOK`` to the notebook's path in the environment the kernel inherits (and
``MTJ_NOTEBOOK_RUNNER`` to its own name, ``nbclient`` when unset), as ``notebooks/run.py`` (``make demo``)
does.

Paths are made absolute against the parent's working directory (``papermill``'s URLs and ``-`` stay as
given). The parent is read once per process: it does not change.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .json_column import json_object

#: papermill's options that take one value, and those that take two (``-p NAME VALUE``).
PAPERMILL_ONE_VALUE = frozenset(
    {
        "-f",
        "--parameters_file",
        "-y",
        "--parameters_yaml",
        "-b",
        "--parameters_base64",
        "-k",
        "--kernel",
        "-l",
        "--language",
        "--engine",
        "--cwd",
        "--log-level",
        "--start-timeout",
        "--start_timeout",
        "--execution-timeout",
        "--autosave-cell-every",
        "--stdout-file",
        "--stderr-file",
    }
)
PAPERMILL_TWO_VALUES = frozenset({"-p", "--parameters", "-r", "--parameters_raw"})
#: The runners named by the program that started the kernel.
RUNNERS = {
    "papermill": "papermill",
    "jupyter-nbconvert": "nbconvert",
    "nbconvert": "nbconvert",
    "jupyter-execute": "nbclient",
    "nbclient": "nbclient",
}
#: A command line longer than this is not read (a kernel's parent never needs more).
MAX_COMMAND_BYTES = 1 << 16


@dataclass(frozen=True)
class NotebookRun:
    """A notebook run headless: the notebook, the program that ran it (``papermill``, ``nbconvert``,
    ``nbclient`` or the program's own name) and, for papermill, the output notebook it writes."""

    path: str
    runner: str
    output: str | None = None

    def as_json(self) -> str:
        """What a record's ``notebook_run`` column keeps."""
        data = {"runner": self.runner, "input": self.path, "output": self.output}
        return json.dumps({k: v for k, v in data.items() if v is not None}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | None) -> NotebookRun | None:
        """A record's ``notebook_run`` read back (None for none or a value this version cannot read)."""
        data = json_object(text)
        if data is None or not isinstance(data.get("input"), str):
            return None
        output = data.get("output")
        return cls(data["input"], str(data.get("runner") or "?"), output if isinstance(output, str) else None)


def notebook_run() -> NotebookRun | None:
    """The headless run this process is the kernel of, or None (see the module docstring)."""
    if os.environ.get("JPY_SESSION_NAME"):
        return None  # a Jupyter server's kernel: it says
    return _named() or _injected() or _from_parent()


#: The notebook a program running it through nbclient's API names for its kernel (see the module docstring).
NOTEBOOK_ENV = "MTJ_NOTEBOOK"
RUNNER_ENV = "MTJ_NOTEBOOK_RUNNER"


def _named() -> NotebookRun | None:
    """``MTJ_NOTEBOOK`` (and ``MTJ_NOTEBOOK_RUNNER``), set by the program that runs the notebook."""
    named = os.environ.get(NOTEBOOK_ENV)
    if not named:
        return None
    return NotebookRun(_absolute(named, Path.cwd()), os.environ.get(RUNNER_ENV) or "nbclient")


def _injected() -> NotebookRun | None:
    """papermill's ``--inject-paths``: its paths as variables of the notebook's namespace (``__main__``)."""
    namespace = getattr(sys.modules.get("__main__"), "__dict__", {})
    source, output = namespace.get("PAPERMILL_INPUT_PATH"), namespace.get("PAPERMILL_OUTPUT_PATH")
    if not isinstance(source, str) or not source:
        return None
    parent = _parent()
    cwd = parent[1] if parent is not None else Path.cwd()
    return NotebookRun(
        _absolute(source, cwd), "papermill", _absolute(output, cwd) if isinstance(output, str) and output else None
    )


def _is_kernel() -> bool:
    """Whether this process is a kernel: jupyter_client starts one as ``python -m ipykernel_launcher -f
    CONNECTION.json``. Only a kernel's parent is the run that names its notebook; any other process's
    parent (a shell running ``pytest A.ipynb``, ``make``) runs no notebook for it."""
    return bool(sys.argv) and Path(sys.argv[0]).name.startswith("ipykernel")


@cache
def _from_parent() -> NotebookRun | None:
    if not _is_kernel():
        return None
    parent = _parent()
    if parent is None:
        return None
    argv, cwd = parent
    return run_of(argv, cwd, Path.cwd())


def run_of(argv: list[str], parent_cwd: Path, kernel_cwd: Path) -> NotebookRun | None:
    """The run the command ``argv`` (started in ``parent_cwd``) is, for a kernel in ``kernel_cwd``."""
    program, args = _program(argv)
    runner = RUNNERS.get(program, program)
    if runner == "papermill":
        paths = _papermill_paths(args)
        if paths is None:
            return None
        source, output = paths
        return NotebookRun(_absolute(source, parent_cwd), runner, _absolute(output, parent_cwd))
    notebooks = [_absolute(a, parent_cwd) for a in args if a.endswith(".ipynb") and not a.startswith("-")]
    if len(notebooks) > 1:
        notebooks = [n for n in notebooks if Path(n).parent == kernel_cwd]
    if len(notebooks) != 1:
        return None
    return NotebookRun(notebooks[0], runner)


def _program(argv: list[str]) -> tuple[str, list[str]]:
    """The program a command line runs (its name; ``python -m X``: X; ``python SCRIPT``: the script's),
    and its arguments."""
    if not argv:
        return "", []
    rest = argv
    if Path(argv[0]).name.startswith("python") and len(argv) > 1:
        rest = argv[1:]
        if rest[0] == "-m" and len(rest) > 1:
            return rest[1].split(".")[0], rest[2:]
    return Path(rest[0]).name, rest[1:]


def _papermill_paths(args: list[str]) -> tuple[str, str] | None:
    """papermill's input and output notebooks from its arguments (its two positional ones)."""
    positional: list[str] = []
    skip = 0
    for arg in args:
        if skip:
            skip -= 1
            continue
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
        elif "=" not in arg:
            skip = 1 if arg in PAPERMILL_ONE_VALUE else 2 if arg in PAPERMILL_TWO_VALUES else 0
    return (positional[0], positional[1]) if len(positional) >= 2 else None


def _absolute(path: str, cwd: Path) -> str:
    if path == "-" or "://" in path:
        return path
    return os.path.normpath(cwd / Path(path).expanduser())


def _parent() -> tuple[list[str], Path] | None:
    """The parent process's command line and working directory (None where ``/proc`` cannot say)."""
    ppid = os.getppid()
    try:
        with open(f"/proc/{ppid}/cmdline", "rb") as f:
            raw = f.read(MAX_COMMAND_BYTES)
        cwd = Path(os.readlink(f"/proc/{ppid}/cwd"))
    except OSError:
        return None
    argv = [part.decode("utf-8", "replace") for part in raw.split(b"\0")]
    while argv and not argv[-1]:
        argv.pop()
    return argv, cwd


__all__ = ["NotebookRun", "notebook_run", "run_of"]
