"""Run the example notebooks headless (the main job of ``make demo``) and print what each cell showed.

    python notebooks/run.py [NOTEBOOK ...]      # default: every notebooks/*.ipynb

Executed copies are written to build/notebooks/ (signed, so JupyterLab opens them trusted on this
machine); the sources are left as they are. It ends with a summary: what ran, where the copies are,
how to open them. Exit 1 if a cell failed.
"""

from __future__ import annotations

import html.parser
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.sign import NotebookNotary

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "build" / "notebooks"
WIDGET = "application/vnd.jupyter.widget-view+json"


class _Rows(html.parser.HTMLParser):
    """The cells of the first HTML table in a text (the tool lists: whole, never cut)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tool_list(data: dict) -> list[str]:
    """A ``%mcp_tools`` table, every tool with its whole arguments and description."""
    parser = _Rows()
    parser.feed(data.get("text/html", ""))
    head, *rows = parser.rows or [[]]
    title = data["text/plain"].splitlines()[0]
    lines = [f"{title} ({len(rows)} tools)"]
    for row in rows:
        cells = dict(zip(head, row, strict=False))
        lines.append(f"  {cells.get('tool', '?')}  ({cells.get('task support', '?')})")
        if cells.get("arguments"):
            lines.append(f"      arguments: {cells['arguments']}")
        if cells.get("description"):
            lines.append(f"      {cells['description']}")
    return lines


def _shown(output: dict) -> list[str]:
    """What a person reads of one output, as lines (nothing for the widget's own stand-in text)."""
    kind = output.get("output_type")
    if kind == "stream":
        return output.get("text", "").rstrip().splitlines()
    if kind == "error":
        return [f"{output['ename']}: {output['evalue']}"]
    data = output.get("data", {})
    # Only blank lines go: a table's header line begins with spaces that keep it above its columns.
    text = data.get("text/plain", "").strip("\n").rstrip()
    if text.startswith("Tools on ") and "text/html" in data:
        return _tool_list(data)
    if WIDGET in data and text.startswith("<BoardWidget ") and "text/html" in data:
        return [_board(text, data["text/html"])]
    if WIDGET in data and text.startswith("<TaskHandle "):
        return []  # the live widget's stand-in; the summary beside it says how the task ended
    return text.splitlines()


def _board(text: str, saved: str) -> str:
    """A board as the saved notebook keeps it: how many tasks, by status (its saved table's first column)."""
    parser = _Rows()
    parser.feed(saved)
    counts: dict[str, int] = {}
    for row in parser.rows[1:]:
        if row:
            counts[row[0]] = counts.get(row[0], 0) + 1
    shown = ", ".join(f"{n} {status}" for status, n in counts.items()) or "no tasks"
    return f"{text.strip('<>')}: {shown}"


def _noise(line: str) -> bool:
    """The kernel's start-up warning about unencrypted TCP (on loopback, for a local run)."""
    return "Kernel is running over TCP without encryption" in line


def headline(source: str) -> str:
    """How a cell is named in the report: its first line of code (a magic, a call), not a comment or a
    closing bracket; marked with an ellipsis when more lines follow."""
    lines = [line.strip() for line in source.strip().splitlines()]
    code = [line for line in lines if line and not line.startswith("#")] or lines or [""]
    first = code[0]
    if len(first) > 76:
        first = first[:75] + "…"
    return first + (" …" if len(code) > 1 and not first.endswith("…") else "")


def narration(source: str, limit: int = 110) -> str:
    """A markdown cell in the report: its first sentence (a heading's text), without markup."""
    source = source.strip().replace("`", "").replace("**", "")
    if source.startswith("#"):  # a heading: its own line
        sentence = source.splitlines()[0].lstrip("# ").strip()
    else:
        sentence = re.split(r"(?<=[.!?])\s", " ".join(source.split()), maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def run(path: Path) -> tuple[bool, float]:
    notebook = nbformat.read(path, as_version=4)
    began = time.monotonic()
    ok = True
    # The kernel's own stderr goes to a file: its start-up warning about TCP on loopback is noise
    # here; anything else it says is shown after the notebook.
    # nbclient names no notebook to its kernel: the task index learns it from MTJ_NOTEBOOK (index/notebook_run.py)
    os.environ["MTJ_NOTEBOOK"] = str(path.resolve())
    with tempfile.TemporaryFile("w+") as stderr:
        try:
            NotebookClient(
                notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
            ).execute(stderr=stderr)
        except CellExecutionError as exc:
            ok = False
            print(f"  cell failed: {str(exc).strip().splitlines()[-1]}")
        stderr.seek(0)
        said = [line for line in stderr.read().splitlines() if line.strip() and not _noise(line)]
    took = time.monotonic() - began
    OUT.mkdir(parents=True, exist_ok=True)
    NotebookNotary().sign(notebook)
    nbformat.write(notebook, OUT / path.name)
    print(f"\n== {path.name}: {'ok' if ok else 'FAILED'} in {took:.1f} s")
    for line in said:
        print(f"  kernel: {line}")
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            print(f"  # {narration(cell.source)}")  # what the notebook says comes next, so it reads as meant
            continue
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        print(f"  >>> {headline(cell.source)}")
        for output in cell.get("outputs", []):
            for line in _shown(output):
                print(f"      {line}")
    return ok, took


def lab_installed() -> bool:
    """Whether JupyterLab is in this environment (``make demo`` installs it with the test tools)."""
    return (Path(sys.executable).parent / "jupyter-lab").exists()


def summary(results: dict[Path, tuple[bool, float]], *, lab: bool | None = None) -> str:
    """The closing lines: what ran, where the executed copies are, how to open them."""
    lab = lab_installed() if lab is None else lab
    failed = [p.name for p, (ok, _) in results.items() if not ok]
    total = sum(took for _, took in results.values())
    where = OUT.relative_to(ROOT) if OUT.is_relative_to(ROOT) else OUT
    first = next(iter(results)).name if results else "01-quickstart.ipynb"
    lines = [
        "",
        "-" * 72,
        f"Ran {len(results)} notebook{'s' if len(results) != 1 else ''} in {total:.0f} s: "
        + (f"{len(results) - len(failed)} ok, FAILED: {', '.join(failed)}" if failed else "all ok"),
        f"The executed copies, with every output, are in {where}/",
        "Open them in JupyterLab (the same tasks, live, with widgets, the task sidebar and notifications):",
    ]
    steps = (
        [
            (f".venv/bin/jupyter lab {where}/{first}", "the executed copy, as it ran here"),
            ("make lab", "the example itself, to run it again"),
        ]
        if lab
        else [("make lab", f"installs JupyterLab, opens notebooks/{first}")]
    )
    width = max(len(command) for command, _ in steps)
    lines += [f"    {command.ljust(width)}   # {why}" for command, why in steps]
    return "\n".join(lines)


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(HERE.glob("*.ipynb"))
    print(
        f"Running {len(paths)} example notebook{'s' if len(paths) != 1 else ''} headless "
        "on the bundled demo server"
    )
    results = {p: run(p) for p in paths}
    print(summary(results))
    sys.exit(0 if all(ok for ok, _ in results.values()) else 1)
