"""Run every benchmark and print one table: each figure beside its anchor from the same run, and the ratio.

    python benchmarks/run.py            # full sizes (about 4 minutes on 2 cores)
    python benchmarks/run.py --tiny     # CI size (under 2 minutes): proves every script still runs

Each script runs in its own process group (so tracemalloc and loaded modules do not leak between
them, and whatever it started goes when it ends), with a time limit. The exit status is 1 when a
script fails or overruns, never because a target is missed. See each script's docstring, and
benchmarks/README.md, for what its figures mean.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Row, table  # noqa: E402 (found through the sys.path line above)

#: Script → time limit in seconds (full size; --tiny runs are far shorter).
SCRIPTS = {
    "poll_cost.py": 600,
    "sse_decode.py": 120,
    "server_throughput.py": 300,
    "memory_per_handle.py": 300,
    "widget_messages.py": 300,
    "completion_latency.py": 300,
    "kernel_latency.py": 1200,
    "index_backends.py": 300,
    "sweep.py": 1200,
    "browser_fleet.py": 900,
}


def run_script(script: str, tiny: bool) -> list[Row] | None:
    """The rows one script prints with ``--json``; None if it failed or ran out of time."""
    argv = [sys.executable, str(HERE / script), "--json"] + (["--tiny"] if tiny else [])
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=SCRIPTS[script])
    except subprocess.TimeoutExpired:
        print(f"TIMED OUT: {script} after {SCRIPTS[script]} s", file=sys.stderr)
        return None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything the script left behind
        except ProcessLookupError:
            pass
        proc.wait()
    if proc.returncode:
        return None
    return [Row(**json.loads(line)) for line in out.splitlines() if line.startswith("{")]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="CI-size runs")
    p.add_argument("--only", action="append", choices=list(SCRIPTS), help="run only this script (repeatable)")
    args = p.parse_args()
    rows: list[Row] = []
    failed = []
    for script in args.only or SCRIPTS:
        got = run_script(script, args.tiny)
        if got is None:
            failed.append(script)
        else:
            rows += got
    print(table(rows))
    for script in failed:
        print(f"FAILED: {script}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
