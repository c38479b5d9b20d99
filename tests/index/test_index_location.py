"""Where the task index lives: a path is a SQLite file, a postgresql:// URL a team's database; a URL is never
taken for a file (issue 22, item 1: ``MTJ_INDEX=postgresql://team:PASSWORD@db/tasks`` made a directory named
after it, password included)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.exports.cli import main
from mcp_tasks_jupyter.index.task_index import TaskIndex, default_index
from mcp_tasks_jupyter.redact import scrub

URL = "postgresql://team:PASSWORD-42@db.example:5432/tasks"


@pytest.mark.parametrize(
    "location",
    [
        "mysql://team:PASSWORD-42@db/tasks",
        "s3://bucket/tasks",
        "postgresql://team:PASSWORD-42@db/tasks?no_such_setting=1",
        "postgres://team:PASSWORD-42@db:port/tasks",
    ],
)
def test_a_url_it_cannot_use_is_an_error_naming_its_scheme_never_a_file(
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


@pytest.mark.parametrize("location", [URL, "postgres://team:PASSWORD-42@db.example/tasks"])
def test_a_postgresql_url_is_a_database_shown_without_its_password(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    index = TaskIndex(location)  # opened on first use: nothing is reached or made yet
    assert index.backend == "postgresql" and index.path is None
    shown = index.describe()
    assert shown.startswith(location.split("://")[0] + "://team@db.example") and shown.endswith("/tasks")
    assert "PASSWORD" not in repr(index) + shown + str(index.location) + repr(index.location)
    assert scrub(f"said {location}") == f"said {location.replace('PASSWORD-42', '***')}"  # registered
    monkeypatch.setenv("MTJ_INDEX", location)
    assert default_index().describe() == shown  # type: ignore[union-attr]
    assert os.listdir(tmp_path) == []


def test_the_command_line_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MTJ_INDEX", "mysql://team:PASSWORD-42@db/tasks")
    assert main(["list"]) == 1
    said = capsys.readouterr().err
    assert said.startswith("mcp-tasks: ") and said.count("\n") == 1 and "mysql://" in said
    assert "PASSWORD" not in said
    assert os.listdir(tmp_path) == []


def test_a_path_is_a_sqlite_file(tmp_path: Path) -> None:
    assert TaskIndex(tmp_path / "a" / "tasks.sqlite3").path == tmp_path / "a" / "tasks.sqlite3"
    assert TaskIndex("~/x.sqlite3").path == Path.home() / "x.sqlite3"
