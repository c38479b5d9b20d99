"""Issue 5's promise: the same ``%mcp_task`` line works unchanged whatever the server speaks.

One kernel connects the name ``srv`` in turn to the demo server forced to each dialect, to
fastmcp-tasks (ext, a server no one here wrote) and to the everything server (2025-11-25); the task
line itself never changes.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator

import pytest

from tests.jupyter.kernel_harness import Kernel, running_kernel
from tests.support import everything_stdio_argv
from tests.support.peers import fastmcp_stdio_argv

pytestmark = pytest.mark.peers

COMPUTE = "r = %mcp_task --wait srv:slow_compute seconds=0.3 label=same"
RESEARCH = (
    'r = %mcp_task --wait --answers \'{"interpretation": "historical"}\' srv:{tool} topic=tides ambiguous=true'
)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    with running_kernel(tmp_path_factory.mktemp("same-line")) as kernel:
        kernel.run("%load_ext mcp_tasks_jupyter")
        yield kernel


def connect(kernel: Kernel, argv: list[str]) -> str:
    kernel.run(f"%mcp_connect srv {shlex.join(argv)}", timeout=60)
    return kernel.value(
        "__import__('mcp_tasks_jupyter.jupyter', fromlist=['_']).get_runtime().client('srv').dialect.name"
    )


@pytest.mark.parametrize("dialect", ["2025-11-25", "ext", "sep1686"])
def test_demo_in_each_dialect(kernel: Kernel, dialect: str) -> None:
    assert connect(kernel, [sys.executable, "-m", "mcp_tasks_jupyter.demo", "--dialect", dialect]) == dialect
    kernel.run(COMPUTE, timeout=60)
    assert kernel.value("r.text") == "same: done in 10 steps, value=385"


def test_fastmcp_tasks(kernel: Kernel) -> None:
    assert connect(kernel, fastmcp_stdio_argv()) == "ext"
    kernel.run(COMPUTE, timeout=60)
    assert "same" in kernel.value("r.text") and kernel.value("r.is_error") is False


def test_everything_server_research_answered_in_advance(kernel: Kernel) -> None:
    assert connect(kernel, everything_stdio_argv()) == "2025-11-25"
    kernel.run("tool = 'simulate-research-query'")
    kernel.run(RESEARCH.replace("{tool}", "$tool"), timeout=60)
    assert "# Research Report: tides (historical)" in kernel.value("r.text")
