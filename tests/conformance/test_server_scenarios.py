"""The demo server (ext dialect, --conformance) against the official conformance suite's tasks scenarios.

The suite's `--suite pending` holds the ten `tasks-*` server scenarios of the tasks extension
(SEP-2663 on the stateless 2026-07-28 wire) next to others this server does not aim at (skills,
custom headers, JSON Schema fixtures, SSE polling), so each tasks scenario is run on its own
(`--scenario NAME`) against one demo server over HTTP on 127.0.0.1, all of them at once. A
scenario passes when its runner exits 0 and no check is a FAILURE or a WARNING; the runner's
wire-schema check validates every message the server sent against the 2026-07-28 schema.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import start_demo_http
from tests.support.conformance_server import ServerScenarioRun, run_server_scenarios
from tests.support.paths import conformance_js, node22

pytestmark = pytest.mark.peers

TASKS_SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
]


@pytest.fixture(scope="module")
def scenario_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ServerScenarioRun]:
    node22()
    conformance_js()  # PeersNotInstalled (run `make peers`) rather than a confusing failure
    out_dir: Path = tmp_path_factory.mktemp("conformance-server")
    with start_demo_http("--conformance") as url:
        return run_server_scenarios(url, TASKS_SCENARIOS, out_dir, workers=5, timeout=90)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scenario", TASKS_SCENARIOS)
def test_tasks_scenario(scenario: str, scenario_runs: dict[str, ServerScenarioRun]) -> None:
    run = scenario_runs[scenario]
    if not run.passed:
        pytest.fail(run.report(), pytrace=False)
