"""Run server scenarios of the official conformance suite against a server that is already listening."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .conformance import NOT_OK
from .paths import LOOPBACK_PRELOAD, conformance_js, node22, node_env


@dataclass
class ServerScenarioRun:
    scenario: str
    returncode: int
    output: str  # the runner's stdout and stderr
    result_dir: Path | None
    checks: list[dict] = field(default_factory=list)

    @property
    def bad_checks(self) -> list[dict]:
        return [check for check in self.checks if check.get("status") in NOT_OK]

    @property
    def passed(self) -> bool:
        """Exit 0, some checks, none a FAILURE or a WARNING (a SKIPPED check is fine)."""
        return self.returncode == 0 and bool(self.checks) and not self.bad_checks

    def report(self) -> str:
        """Everything a reader needs to see why the scenario failed."""
        lines = [
            f"conformance server scenario {self.scenario!r}: exit {self.returncode}, {len(self.checks)} checks"
        ]
        for check in self.bad_checks:
            lines.append(f"  {check['status']} {check['id']} ({check.get('name')}): {check.get('description')}")
            if check.get("errorMessage"):
                lines.append(f"      {check['errorMessage']}")
            if check.get("details"):
                lines.append(f"      details: {json.dumps(check['details'])[:800]}")
        lines.append(f"--- runner output ---\n{self.output[-3000:]}")
        return "\n".join(lines)


def run_server_scenario(url: str, scenario: str, out_dir: Path, *, timeout: float = 90.0) -> ServerScenarioRun:
    """`conformance server --url URL --scenario SCENARIO -o OUT_DIR` on Node 22, and its checks.json."""
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        node22(),
        "-r",
        str(LOOPBACK_PRELOAD),
        conformance_js(),
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        "-o",
        str(out_dir),
    ]
    completed = subprocess.run(
        argv,
        check=False,
        env=node_env(),
        cwd=out_dir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result_dirs = sorted(out_dir.glob(f"server-{scenario}-*/checks.json"))
    result_dir = result_dirs[-1].parent if result_dirs else None
    checks = json.loads((result_dir / "checks.json").read_text()) if result_dir else []
    return ServerScenarioRun(
        scenario, completed.returncode, completed.stdout + completed.stderr, result_dir, checks
    )


def run_server_scenarios(
    url: str, scenarios: list[str], out_dir: Path, *, workers: int = 5, timeout: float = 90.0
) -> dict[str, ServerScenarioRun]:
    """Several scenarios at once against one server (each in its own runner process and directory)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            name: pool.submit(run_server_scenario, url, name, out_dir / name, timeout=timeout)
            for name in scenarios
        }
        return {name: future.result() for name, future in futures.items()}
