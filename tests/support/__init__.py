"""Test support: start and stop real peers (npm packages, the mcp SDK, our demo) on loopback.

Everything here is for tests only. Missing npm peers raise PeersNotInstalled, telling the reader to
run `make peers`; nothing is skipped.
"""

from .conformance import ScenarioRun, run_client_scenario
from .paths import REPO_ROOT, PeersNotInstalled, node22
from .peers import (
    demo_stdio_argv,
    everything_stdio_argv,
    fastmcp_stdio_argv,
    mcp1_stdio_argv,
    start_demo_http,
    start_everything_http,
    start_fastmcp_http,
    start_mcp1_http,
)
from .processes import PeerStartError, free_port
from .waiting import eventually

__all__ = [
    "REPO_ROOT",
    "PeerStartError",
    "PeersNotInstalled",
    "ScenarioRun",
    "demo_stdio_argv",
    "eventually",
    "everything_stdio_argv",
    "fastmcp_stdio_argv",
    "free_port",
    "mcp1_stdio_argv",
    "node22",
    "run_client_scenario",
    "start_demo_http",
    "start_everything_http",
    "start_fastmcp_http",
    "start_mcp1_http",
]
