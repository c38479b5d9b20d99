"""Shared pieces of the benchmark scripts: servers in subprocesses, rows, one table.

A row is a figure beside its anchor (measured in the same run) and the ratio figure / anchor.
Each script prints its rows as a table; with ``--json`` it prints one JSON object per row
instead, which ``benchmarks/run.py`` collects into one table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import select
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The tests' mcp 1.x task server, served over HTTP as the SDK serves it (see mcp1_http.py).
MCP1_SERVER = Path(__file__).resolve().parent / "mcp1_http.py"


@dataclass
class Row:
    name: str  # what is measured
    figure: float
    anchor_name: str
    anchor: float
    unit: str
    target: str = ""  # e.g. "<= 20 KB" or "ratio <= 0.5"; empty: no target
    met: bool | None = None  # None: no target
    note: str = ""  # context printed under the table (e.g. CPU load while measuring)

    @property
    def ratio(self) -> float:
        return self.figure / self.anchor if self.anchor else float("nan")


#: The process id of each running server, by its URL (so that a script can read its CPU).
SERVER_PIDS: dict[str, int] = {}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def server(argv: list[str], start_timeout: float = 30.0) -> Iterator[str]:
    """Run an HTTP MCP server whose first stdout line names its URL; yield the URL; always stop it.

    Its stderr goes to a temporary file (shutdown chatter stays out of the table) and is shown if
    it does not start.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=ROOT, env=env)
        try:
            ready, _, _ = select.select([proc.stdout], [], [], start_timeout)
            line = proc.stdout.readline() if ready else ""
            match = re.search(r"(http://\S+)", line)
            if match is None:
                errors.seek(0)
                raise RuntimeError(
                    f"server {argv} did not announce a URL within {start_timeout} s: {line!r}\n"
                    + errors.read().decode(errors="replace")[-2000:]
                )
            SERVER_PIDS[match.group(1)] = proc.pid
            yield match.group(1)
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def demo_server(*extra: str) -> contextlib.AbstractContextManager[str]:
    return server([sys.executable, "-m", "mcp_tasks_jupyter.demo", "--http", "--port", "0", *extra])


def mcp1_server() -> contextlib.AbstractContextManager[str]:
    return server([sys.executable, str(MCP1_SERVER)])


def fmt(value: float) -> str:
    if math.isnan(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def table(rows: list[Row]) -> str:
    head = ("figure", "value", "anchor", "value", "unit", "ratio", "target")
    cells = [head] + [
        (
            r.name,
            fmt(r.figure),
            r.anchor_name,
            fmt(r.anchor),
            r.unit,
            fmt(r.ratio),
            "" if r.met is None else f"{r.target}: {'met' if r.met else 'MISSED'}",
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    right = {1, 3, 5}
    lines = []
    for n, c in enumerate(cells):
        lines.append(
            " | ".join(
                x.rjust(w) if i in right else x.ljust(w) for i, (x, w) in enumerate(zip(c, widths, strict=True))
            ).rstrip()
        )
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths))
    notes = [r.note for r in rows if r.note]
    if notes:
        lines.append("")
        lines.extend(f"* {note}" for note in notes)
    return "\n".join(lines)


def emit(rows: list[Row], as_json: bool) -> None:
    if as_json:
        for row in rows:
            print(json.dumps(asdict(row)), flush=True)
    else:
        print(table(rows))


def parser(doc: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="CI-size run (seconds, noisy figures)")
    p.add_argument("--json", action="store_true", help="one JSON object per row (for run.py)")
    return p
