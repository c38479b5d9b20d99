"""Only a kernel takes its notebook from the command that started it (``index/notebook_run.py``): a
process that is not a kernel, started by a command that names notebooks (``pytest A.ipynb``), records
no notebook, where it took the command's notebook for its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.loopback

PRINT_RUN = "from mcp_tasks_jupyter.index.notebook_run import notebook_run; print(notebook_run())"


def test_a_process_that_is_not_a_kernel_names_no_notebook_whatever_its_parent_ran(tmp_path: Path) -> None:
    (tmp_path / "A.ipynb").write_text("{}")
    # sh is the parent, its command line names A.ipynb (as `pytest A.ipynb` would), in A's directory
    command = f'{sys.executable} -c "{PRINT_RUN}"'
    done = subprocess.run(
        ["sh", "-c", command, "sh", "A.ipynb"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
