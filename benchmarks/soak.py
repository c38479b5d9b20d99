"""The long soak (``make soak``): rounds of the soak of ``tests/faults/test_soak.py`` (200 tasks of mixed
lengths through the project's fault-injecting proxy to the demo server, a server restart in each round),
one after another with a new seed each, for ``--minutes``; prints each round's figures and the totals.

    python benchmarks/soak.py [--minutes 30] [--tasks 200] [--seed 1]

A figure, not a verdict: the run ends with the problems found (none expected) and exit status 1 if any.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.soak import run_soak


async def main(minutes: float, tasks: int, seed: int) -> int:
    ends = time.monotonic() + minutes * 60
    totals: dict[str, collections.Counter[str]] = {
        "outcomes": collections.Counter(),
        "faults": collections.Counter(),
    }
    rounds = problems = lost = sessions = 0
    peak = 0.0
    with tempfile.TemporaryDirectory() as scratch:
        while time.monotonic() < ends:
            report = await run_soak(
                tasks=tasks, seed=seed + rounds, index_path=Path(scratch) / f"round-{rounds}.sqlite3"
            )
            rounds += 1
            print(f"-- round {rounds}", *report.lines(), sep="\n", flush=True)
            totals["outcomes"].update(report.outcomes)
            totals["faults"].update(report.faults)
            problems += len(report.problems)
            lost += report.lost_by_server
            sessions += report.new_sessions
            peak = max(peak, report.peak_memory_mb)
    print("== totals")
    print(f"rounds {rounds}, tasks {rounds * tasks}, server restarts {rounds}, tasks the server lost {lost}")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(totals["outcomes"].items())))
    print("faults injected: " + ", ".join(f"{k} {v}" for k, v in sorted(totals["faults"].items())))
    print(f"new sessions {sessions}; peak client memory {peak:.1f} MB; problems {problems}")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    sys.exit(asyncio.run(main(args.minutes, args.tasks, args.seed)))
