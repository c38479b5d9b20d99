"""One owner for every background job (issue 31 item 1): nothing in the package but the group of
``session/background.py`` starts an asyncio task (the demo server, a program of its own, aside), and
closing a connection ends every job of it: the session's, the transport's, the dialect's, each poller."""

import ast
import asyncio
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.session.background import Background
from tests.support import demo_stdio_argv

PACKAGE = Path(mtj.__file__).parent
STARTERS = {"create_task", "ensure_future"}


def _starters(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Attribute) and node.func.attr in STARTERS)
            or (isinstance(node.func, ast.Name) and node.func.id in STARTERS)
        )
    ]


@pytest.mark.unit
def test_only_the_owner_starts_asyncio_tasks() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if "demo" not in path.relative_to(PACKAGE).parts and (lines := _starters(path))
    }
    assert set(found) == {"session/background.py"}, found


@pytest.mark.unit
@pytest.mark.anyio
async def test_closing_a_group_ends_its_children_and_reports_no_failure_of_its_own() -> None:
    root = Background("connection")
    transport, tasks = root.child("transport"), root.child("tasks")
    never = asyncio.Event()
    jobs = [transport.spawn(never.wait()), tasks.spawn(never.wait()), root.future(never.wait())]
    assert len(root) == 3
    await root.aclose()
    assert all(job.cancelled() for job in jobs) and len(root) == 0


@pytest.mark.servers
@pytest.mark.anyio
async def test_closing_a_connection_leaves_no_job_of_it_running() -> None:
    before = set(asyncio.all_tasks())
    async with mtj.connect(demo_stdio_argv()) as client:
        handle = await client.start_task("slow_compute", {"seconds": 30, "steps": 3})
        assert handle.task_id is not None
        assert len(client.session.background) >= 2  # at least the stderr reader and the poller
    await asyncio.sleep(0)
    left = [t for t in asyncio.all_tasks() - before if not t.done()]
    assert left == [], [t.get_name() for t in left]
