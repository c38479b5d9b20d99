"""The README's papermill line runs the study it names (issue 30, item 3): the line is read from the README,
run as a shell would run it, and the task index then holds one research task per topic, not one per character
of a string. The old ``-p topics '["tides"]'`` (papermill passes text) fails loudly, before any task starts."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]

NOTEBOOK = "notebooks/09-papermill.ipynb"
OLD_LINE = """papermill notebooks/09-papermill.ipynb out.ipynb -p topics '["tides"]'"""


def readme_line() -> str:
    """The one papermill command line the README gives (inline or in a code block)."""
    readme = (REPO_ROOT / "README.md").read_text()
    found = set(re.findall(r"papermill " + re.escape(NOTEBOOK) + r"[^`\n]*", readme))
    assert len(found) == 1, f"the README should give one papermill line, it gives {sorted(found)}"
    return found.pop().strip()


def run(line: str, where: Path) -> subprocess.CompletedProcess[str]:
    """``line`` as a shell runs it, in a directory of its own that sees the repository's notebooks."""
    (where / "notebooks").symlink_to(REPO_ROOT / "notebooks")
    argv = shlex.split(line)
    assert argv[0] == "papermill"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}  # the kernel imports this checkout
    command = [sys.executable, "-m", "papermill", *argv[1:]]
    return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=150)


def studied(tmp_path: Path) -> list[str]:
    """The topic of every research task the task index recorded (the test's own index, MTJ_INDEX)."""
    path = tmp_path / "provenance.jsonl"
    mtj.export({"tool": "research"}, path)
    return [row["arguments"]["topic"] for row in mtj.read_export(path)]


def test_the_readmes_line_runs_one_task_per_topic(tmp_path: Path) -> None:
    line = readme_line()
    assert "-y 'topics: [tides]'" in line
    assert line in (REPO_ROOT / "docs" / "command-line-and-exports.md").read_text()  # the same line there
    done = run(line, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "out.ipynb").exists()
    assert studied(tmp_path) == ["tides"]


def test_a_list_passed_as_text_fails_loudly_before_any_task(tmp_path: Path) -> None:
    done = run(OLD_LINE, tmp_path)
    assert done.returncode != 0
    assert "topics must be a list of topics, not the str '[\"tides\"]'" in done.stderr
    assert "-y 'topics: [tides, moons]'" in done.stderr
    assert studied(tmp_path) == []
