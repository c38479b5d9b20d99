"""The person running a study (``index/author.py``): an ORCID iD checked for its form and its ISO 7064
MOD 11-2 check digit, and where the person is named (``set_author``, ``MTJ_AUTHOR``/``MTJ_ORCID``, the
setting file in the Jupyter config directory), in that order."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.exports.cli import main
from mcp_tasks_jupyter.index.author import check_orcid, current_author, orcid_check_digit, settings_path
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex


@pytest.fixture(autouse=True)
def _nobody_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    for name in ("MTJ_AUTHOR", "MTJ_ORCID", "MTJ_AFFILIATION"):
        monkeypatch.delenv(name, raising=False)
    yield
    mtj.set_author()


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("0000-0002-1825-0097", "0000-0002-1825-0097"),
        ("https://orcid.org/0000-0002-1694-233X", "0000-0002-1694-233X"),
        ("0000-0002-1694-233x", "0000-0002-1694-233X"),
        ("0000000218250097", "0000-0002-1825-0097"),
        (" orcid.org/0000-0001-5109-3700 ", "0000-0001-5109-3700"),
    ],
)
def test_an_orcid_id_is_kept_in_its_one_form(given: str, kept: str) -> None:
    assert check_orcid(given) == kept


def test_the_check_digit_is_iso_7064_mod_11_2() -> None:
    assert orcid_check_digit("000000021825009") == "7"
    assert orcid_check_digit("000000021694233") == "X"


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("0000-0002-1825-0096", "its check digit is 6, but its other digits give 7"),
        ("0000-0002-1825-009", "not an ORCID iD: one is 16 characters"),
        ("Josiah Carberry", "not an ORCID iD: one is 16 characters"),
        ("0000-0002-1825-00977", "not an ORCID iD: one is 16 characters"),
    ],
)
def test_a_wrong_orcid_id_is_refused_saying_what_is_wrong(given: str, words: str) -> None:
    with pytest.raises(mtj.UsageError, match=words):
        mtj.set_author("Josiah Carberry", orcid=given)
    assert current_author() is None


def test_a_name_is_needed() -> None:
    with pytest.raises(mtj.UsageError, match="give the person's name"):
        mtj.set_author("  ", orcid="0000-0002-1825-0097")
    with pytest.raises(mtj.UsageError, match="give the person's name"):
        mtj.set_author(orcid="0000-0002-1825-0097")


def test_set_author_then_the_environment_then_the_setting_file(monkeypatch: pytest.MonkeyPatch) -> None:
    assert current_author() is None  # nobody named: records keep only the login name
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"author": {"name": "From File", "orcid": "0000-0001-5109-3700"}}))
    assert current_author() == mtj.Author("From File", "0000-0001-5109-3700")
    monkeypatch.setenv("MTJ_AUTHOR", "From Env")
    monkeypatch.setenv("MTJ_ORCID", "0000-0002-1694-233X")
    monkeypatch.setenv("MTJ_AFFILIATION", "Somewhere")
    assert current_author() == mtj.Author("From Env", "0000-0002-1694-233X", "Somewhere")
    mtj.set_author("From Code")
    assert current_author() == mtj.Author("From Code")
    mtj.set_author()
    assert current_author() == mtj.Author("From Env", "0000-0002-1694-233X", "Somewhere")


def test_a_wrong_orcid_in_the_environment_is_left_out_and_said(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MTJ_AUTHOR", "Josiah Carberry")
    monkeypatch.setenv("MTJ_ORCID", "0000-0002-1825-0096")
    assert current_author() == mtj.Author("Josiah Carberry")
    assert "recorded without its ORCID iD" in caplog.text and "check digit" in caplog.text


def test_save_writes_the_setting_for_later_kernels() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"license": "CC-BY-4.0"}))
    mtj.set_author("Josiah Carberry", orcid="0000-0002-1825-0097", save=True)
    assert json.loads(path.read_text()) == {
        "license": "CC-BY-4.0",
        "author": {"name": "Josiah Carberry", "orcid": "0000-0002-1825-0097"},
    }
    mtj.set_author()
    assert current_author() == mtj.Author("Josiah Carberry", "0000-0002-1825-0097")


def test_exports_and_the_command_line_name_the_person(tmp_path: Path) -> None:
    index = TaskIndex(tmp_path / "tasks.sqlite3")
    before = index.add(ServerIdentity("demo", "x"), "slow_compute", {"seconds": 1})
    mtj.set_author("Josiah Carberry", orcid="0000-0002-1825-0097", affiliation="Brown University")
    named = index.add(ServerIdentity("demo", "x"), "slow_compute", {"seconds": 2})
    index.close()
    for name in ("study.jsonl", "study.csv"):
        assert mtj.export(None, tmp_path / name, index=index) == 2
        rows = {int(row["record"]): row for row in mtj.read_export(tmp_path / name)}
        assert rows[named]["author"] == {
            "name": "Josiah Carberry",
            "orcid": "0000-0002-1825-0097",
            "affiliation": "Brown University",
        }
        assert rows[before]["author"] in (None, "")
    out = io.StringIO()
    assert main(["--index", str(tmp_path / "tasks.sqlite3"), "list"], out=out) == 0
    listed = out.getvalue().splitlines()
    assert listed[0].split()[-1] == "by" and listed[-1].endswith("Josiah Carberry")
    assert "@" in listed[1].split()[-1]  # nobody named: the login name, as before


def test_the_setting_file_is_read_once_until_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every task record asks for the author: a sweep's records must not each read and parse the file on the
    kernel's loop, yet a file another kernel rewrites is read again."""
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"author": {"name": "Josiah Carberry"}}))
    reads: list[Path] = []
    read_text = Path.read_text

    def counted(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self)
        return read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counted)
    assert [current_author() for _ in range(50)] == [mtj.Author("Josiah Carberry")] * 50
    assert reads == [path]
    path.write_text(json.dumps({"author": {"name": "Ada Lovelace, now"}}))  # another size: another file
    assert current_author() == mtj.Author("Ada Lovelace, now")
    assert reads == [path, path]
