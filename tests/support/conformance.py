"""Run one client scenario of the official conformance suite against tests/conformance/client.py."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .paths import CONFORMANCE_CLIENT, LOOPBACK_PRELOAD, PYTHON, conformance_js, node22, node_env
from .processes import python_env

NOT_OK = ("FAILURE", "WARNING")  # the runner exits 1 on either


@dataclass
class ScenarioRun:
    scenario: str
    spec_version: str
    returncode: int
    output: str  # the runner's stdout and stderr
    result_dir: Path | None
    checks: list[dict] = field(default_factory=list)

    @property
    def bad_checks(self) -> list[dict]:
        return [check for check in self.checks if check.get("status") in NOT_OK]

    def client_output(self) -> str:
        if self.result_dir is None:
            return "(no result directory)"
        return "\n".join(
            f"--- client {name} ---\n{(self.result_dir / f'{name}.txt').read_text(errors='replace')[-3000:]}"
            for name in ("stdout", "stderr")
            if (self.result_dir / f"{name}.txt").exists()
        )

    def report(self) -> str:
        """Everything a reader needs to see why the scenario failed."""
        lines = [f"conformance client scenario {self.scenario!r} at {self.spec_version}: exit {self.returncode}"]
        for check in self.bad_checks:
            lines.append(f"  {check['status']} {check['id']} ({check.get('name')}): {check.get('description')}")
            if check.get("errorMessage"):
                lines.append(f"      {check['errorMessage']}")
            if check.get("details"):
                lines.append(f"      details: {json.dumps(check['details'])[:600]}")
        lines.append(self.client_output())
        lines.append(f"--- runner output ---\n{self.runner_summary()}")
        return "\n".join(lines)

    def runner_summary(self) -> str:
        """The runner's own lines: its echo of the client's output is already shown above."""
        head = re.split(r"\n(?:Stdout|Stderr):\n", self.output, maxsplit=1)[0]
        at = self.output.rfind("Test Results:")
        tail = self.output[at:] if at >= 0 else ""
        return head[-1500:] + (f"\n...\n{tail[-1500:]}" if tail and tail not in head else "")


def client_command() -> str:
    """The --command string; the runner splits it on spaces, so neither path may contain one."""
    command = f"{PYTHON} {CONFORMANCE_CLIENT}"
    if len(command.split(" ")) != 2:
        raise RuntimeError(f"the conformance runner cannot run a command with spaces in a path: {command!r}")
    return command


def run_client_scenario(
    scenario: str, spec_version: str, out_dir: Path, *, timeout: float = 90.0, client_timeout_ms: int = 30000
) -> ScenarioRun:
    """Run `conformance client --scenario SCENARIO --spec-version V -o OUT_DIR` and read its checks.json.

    The suite runs on Node 22 (first on PATH too) with the loopback preload, so its scripted
    servers listen on 127.0.0.1 only; the client under test is this venv's Python.
    """
    argv = [
        node22(),
        "-r",
        str(LOOPBACK_PRELOAD),
        conformance_js(),
        "client",
        "--command",
        client_command(),
        "--scenario",
        scenario,
        *(["--spec-version", spec_version] if spec_version != "default" else []),
        "--timeout",
        str(client_timeout_ms),
        "-o",
        str(out_dir),
    ]
    completed = subprocess.run(
        argv,
        env=node_env(python_env()),
        cwd=out_dir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result_dirs = sorted(out_dir.glob(f"{scenario}-*/checks.json"))
    result_dir = result_dirs[-1].parent if result_dirs else None
    checks = json.loads((result_dir / "checks.json").read_text()) if result_dir else []
    return ScenarioRun(
        scenario, spec_version, completed.returncode, completed.stdout + completed.stderr, result_dir, checks
    )
