"""The parameterised example notebook (issue 16, item 6), run headless by papermill twice against one
demo server over HTTP that counts, on its side, every tool call that reaches it: the second run, with
the cache on, answers every task from the task index and makes no call."""

from __future__ import annotations

from pathlib import Path

import nbformat
import papermill
import pytest

from tests.support import REPO_ROOT, start_demo_http

NOTEBOOK = REPO_ROOT / "notebooks" / "09-papermill.ipynb"
TOPICS = ["moons", "rivers"]


def _printed(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    return "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))


@pytest.mark.timeout(240)
def test_a_second_run_with_the_cache_makes_no_server_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))  # the kernel imports this checkout
    calls = tmp_path / "calls.txt"
    calls.touch()
    with start_demo_http("--count-calls", str(calls), "--poll-interval", "100") as url:
        parameters = {
            "topics": TOPICS,
            "answers": {"interpretation": "{topic} (economics)", "depth": 1},
            "server": url,
            "cache": True,
        }
        runs = []
        for run in ("first", "second"):
            out = tmp_path / f"{run}.ipynb"
            papermill.execute_notebook(
                str(NOTEBOOK),
                str(out),
                parameters={**parameters, "provenance": str(tmp_path / f"{run}.jsonl")},
                kernel_name="python3",
                cwd=str(tmp_path),
                progress_bar=False,
            )
            runs.append((out, calls.read_text().splitlines()))
    (first, after_first), (second, after_second) = runs
    assert after_first.count("research") >= len(TOPICS) and set(after_first) == {"research"}
    assert after_second == after_first  # not one tool call more
    assert "cached: 0 of 2" in _printed(first) and "cached: 2 of 2" in _printed(second)
    injected = nbformat.read(second, as_version=4).cells[2]
    assert "injected-parameters" in injected.metadata.get("tags", []) and "moons" in injected.source
    for run in ("first", "second"):
        assert "'moons (economics)'" in (tmp_path / f"{run}.jsonl").read_text().replace('"', "'")
