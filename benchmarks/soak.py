"""The long soak (``make soak``): rounds of the soak of ``tests/faults/test_soak.py`` (200 tasks of mixed
lengths through the project's fault-injecting proxy to the demo server, a server restart in each round),
one after another with a new seed each, for ``--minutes``; prints each round's figures and the totals.

    python benchmarks/soak.py [--minutes 30] [--tasks 200] [--seed 1] [--mix mixed|issue30]
                              [--dialects 2025-11-25,ext] [--dark]

Issue 30's size: ``--tasks 1000 --mix issue30 --dialects 2025-11-25,ext --dark --minutes 15`` (rounds of
1,000 tasks, 72% computations, 8% of them cancelled, 20% research questions answered by ``answers=``, the
dialects taken in turn, the network dark for 1-8 s every 10-30 s besides the other faults).

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

from tests.support.fault_proxy import FaultRates
from tests.support.soak import MIXES, run_soak


def rss_mb() -> float:
    """The process's resident memory now (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def main(minutes: float, tasks: int, seed: int, mix: str, dialects: list[str], dark: bool) -> int:
    ends = time.monotonic() + minutes * 60
    totals: dict[str, collections.Counter[str]] = {
        "outcomes": collections.Counter(),
        "faults": collections.Counter(),
    }
    rounds = problems = lost = sessions = 0
    peak = 0.0
    rates = FaultRates(dark_every_s=(10.0, 30.0)) if dark else FaultRates()
    rss_before = rss_mb()
    with tempfile.TemporaryDirectory() as scratch:
        while time.monotonic() < ends:
            report = await run_soak(
                tasks=tasks,
                seed=seed + rounds,
                index_path=Path(scratch) / f"round-{rounds}.sqlite3",
                weights=MIXES[mix],
                dialect=dialects[rounds % len(dialects)],
                rates=rates,
            )
            rounds += 1
            print(f"-- round {rounds}", *report.lines(), f"process RSS {rss_mb():.0f} MB", sep="\n", flush=True)
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
    print(f"process RSS {rss_before:.0f} MB before the first round, {rss_mb():.0f} MB at the end")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mix", choices=sorted(MIXES), default="mixed", help="the share of each kind of task")
    parser.add_argument("--dialects", default="2025-11-25", help="comma-separated; the rounds take them in turn")
    parser.add_argument("--dark", action="store_true", help="the network also goes dark now and then")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    sys.exit(asyncio.run(main(args.minutes, args.tasks, args.seed, args.mix, args.dialects.split(","), args.dark)))
