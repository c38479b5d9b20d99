"""Run every benchmark and print one table: each figure beside its anchor from the same run, and the ratio.

    python benchmarks/run.py            # moderate sizes (about two minutes)
    python benchmarks/run.py --tiny     # CI size (well under a minute of measuring)

Each script runs in its own process (so tracemalloc and loaded modules do not leak between them);
see each script's docstring, and benchmarks/README.md, for what its figures mean.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Row, table

SCRIPTS = ["memory_per_handle.py", "server_throughput.py", "poll_vs_mcp1.py"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="CI-size runs")
    p.add_argument("--only", action="append", choices=SCRIPTS, help="run only this script (repeatable)")
    args = p.parse_args()
    rows: list[Row] = []
    failed = []
    for script in args.only or SCRIPTS:
        argv = [sys.executable, str(HERE / script), "--json"] + (["--tiny"] if args.tiny else [])
        done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
        if done.returncode:
            failed.append(script)
            continue
        rows += [Row(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]
    print(table(rows))
    for script in failed:
        print(f"FAILED: {script}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
