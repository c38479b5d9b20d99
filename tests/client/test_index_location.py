"""Where the task index lives: a path is a SQLite file; a URL is never taken for a file (issue 22, item 1:
``MTJ_INDEX=postgresql://team:PASSWORD@db/tasks`` made a directory named after it, password included)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.exports.cli import main
from mcp_tasks_jupyter.index.task_index import TaskIndex, default_index

URL = "postgresql://team:PASSWORD-42@db.example:5432/tasks"


@pytest.mark.parametrize("location", [URL, "postgres://db/tasks", "mysql://db/tasks", "s3://bucket/tasks"])
def test_a_url_is_an_error_naming_its_scheme_never_a_file(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(mtj.UsageError) as raised:
        TaskIndex(location)
    said = str(raised.value)
    assert location.split("://")[0] + "://" in said and "PASSWORD" not in said
    monkeypatch.setenv("MTJ_INDEX", location)
    with pytest.raises(mtj.UsageError):
        default_index()
    assert os.listdir(tmp_path) == []  # nothing made in the current directory


def test_the_command_line_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MTJ_INDEX", URL)
    assert main(["list"]) == 1
    said = capsys.readouterr().err
    assert said.startswith("mcp-tasks: ") and "postgresql://" in said and "PASSWORD" not in said
    assert os.listdir(tmp_path) == []


def test_a_path_is_a_sqlite_file(tmp_path: Path) -> None:
    assert TaskIndex(tmp_path / "a" / "tasks.sqlite3").path == tmp_path / "a" / "tasks.sqlite3"
    assert TaskIndex("~/x.sqlite3").path == Path.home() / "x.sqlite3"
