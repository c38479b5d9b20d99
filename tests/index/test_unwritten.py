"""The file that keeps what a closing index could not write (index/unwritten.py): taken once, a taker's
file whose process is gone taken again, a file others could read never made, and a hand-edited line that
would put something other than a column's name into SQL skipped."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcp_tasks_jupyter.index import unwritten
from mcp_tasks_jupyter.index.unwritten import Unwritten

pytestmark = pytest.mark.unit


def test_kept_changes_are_taken_once_and_the_file_is_private(tmp_path: Path) -> None:
    path = unwritten.file_for("postgresql://team@db:5432/tasks", tmp_path)
    unwritten.keep(path, [Unwritten(1, {"status": "working"}, {}), Unwritten(2, None, {"status": "completed"})])
    unwritten.keep(path, [Unwritten(1, None, {"status": "failed"})])  # a second process closing
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    changes, files = unwritten.take(path)
    assert [(c.row, c.insert, c.sets) for c in changes] == [
        (1, {"status": "working"}, {}),
        (2, None, {"status": "completed"}),
        (1, None, {"status": "failed"}),
    ]
    assert not path.exists() and unwritten.take(path) == ([], [])  # another taker finds nothing
    unwritten.done(files)
    assert not list(path.parent.iterdir())


def test_a_takers_file_whose_process_is_gone_is_taken_again(tmp_path: Path) -> None:
    path = unwritten.file_for("postgresql://team@db:5432/tasks", tmp_path)
    gone = Path("/proc/sys/kernel/pid_max").read_text().strip()  # no process ever has this id
    unwritten.keep(path, [Unwritten(7, {"status": "working"}, {})])
    path.rename(path.with_name(f"{path.stem}.{gone}.dead.taking"))
    changes, files = unwritten.take(path)
    assert [c.row for c in changes] == [7] and len(files) == 1


def test_a_line_that_is_not_a_record_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = unwritten.file_for("postgresql://team@db:5432/tasks", tmp_path)
    unwritten.keep(path, [Unwritten(1, {"status": "working"}, {})])
    with path.open("a") as file:
        file.write('{"row": 2, "insert": null, "sets": {"status = 1; DROP TABLE tasks; --": 1}}\n{"row": 3, "ins')
    with caplog.at_level(logging.WARNING):
        changes, _ = unwritten.take(path)
    assert [c.row for c in changes] == [1]
    assert "line 2" in caplog.text and "line 3" in caplog.text
