"""One status vocabulary: the Python one (status.py) and its TypeScript twin (labextension/src/status.ts)."""

import re
from pathlib import Path

from mcp_tasks_jupyter.tasks import status

TS = (Path(__file__).resolve().parent.parent / "labextension" / "src" / "status.ts").read_text()


def _ts_strings(name: str) -> list[str]:
    body = re.search(rf"export const {name}\b[^=]*=\s*(?:new Set\()?\s*[\[{{](.*?)[\]}}]", TS, re.S)
    assert body is not None, name
    return re.findall(r"'([^']*)'", body.group(1))


def test_the_statuses_are_the_same_in_both_languages():
    assert tuple(_ts_strings("STATUSES")) == status.STATUSES
    assert set(_ts_strings("FINISHED")) == status.FINISHED
    assert set(_ts_strings("FAILURES")) == status.FAILURES


def test_the_words_are_the_same_in_both_languages():
    pairs = dict(re.findall(r"^\s*(\w+): '([^']*)'", TS.split("export const WORDS", 1)[1].split("};", 1)[0], re.M))
    assert pairs == status.WORDS
    assert status.in_words("input_required") == "needs input" and status.in_words("odd") == "odd"
