"""Through a real kernel: ``%mcp_connect --header`` to a URL with userinfo, ``%mcp_servers``, and a task
whose server echoes the token in its error; no output the notebook would save holds a secret."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator

import pytest

from tests.jupyter.kernel_harness import Kernel, Notebook, running_kernel

from .secrets_support import new_secret
from .server import Error, FaultHTTPServer

TOKEN = new_secret("tok")
PASSWORD = new_secret("pw")


@pytest.fixture(scope="module")
def fault_url() -> Iterator[str]:
    """The fault server on its own event loop in a thread (the kernel cells block this one)."""
    ready: dict[str, str] = {}
    started, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        server = FaultHTTPServer()
        server.brain.script["tasks/get"] = lambda m: Error(-32603, f"backend refused Bearer {TOKEN}")
        await server.start()
        ready["url"] = server.url
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(20), "the fault server did not start"
    try:
        yield ready["url"]
    finally:
        stop.set()
        thread.join(10)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    with running_kernel(tmp_path_factory.mktemp("secrets-kernel")) as kernel:
        kernel.run("%load_ext mcp_tasks_jupyter")
        yield kernel


@pytest.mark.timeout(120)
def test_connect_servers_and_a_failing_task_show_no_secret(kernel: Kernel, fault_url: str) -> None:
    notebook = Notebook(kernel)  # keeps every iopub message, widget updates from background jobs too
    url = fault_url.replace("http://", f"http://alice:{PASSWORD}@")
    connect = notebook.run(f'%mcp_connect --header "Authorization=Bearer {TOKEN}" api {url}')
    assert "connected api" in notebook.stdout(connect)
    servers = notebook.run("%mcp_servers")
    table = [m["content"]["data"]["text/plain"] for m in notebook.of(servers) if m["msg_type"] == "display_data"]
    assert fault_url in table[0] and "headers: Authorization" in table[0]
    notebook.run("h = %mcp_task api:job")
    waited = notebook.run("try:\n    await h\nexcept Exception as exc:\n    print(type(exc).__name__, exc)")
    assert "TaskFailed" in notebook.stdout(waited) and "backend refused ***" in notebook.stdout(waited)
    notebook.wait(
        lambda m: m["msg_type"] == "comm_msg" and '"failed"' in json.dumps(m["content"]),
        what="the widget's update to failed",
    )
    notebook.run("h")
    notebook.run(
        "from mcp_tasks_jupyter.jupyter.runtime import get_runtime\nprint(get_runtime().client('api').describe())"
    )
    notebook.run(
        "import os, glob\nprint(b''.join(open(p, 'rb').read() for p in glob.glob(os.environ['MTJ_INDEX'] + '*')))"
    )
    # Everything the kernel sent that a saved notebook could keep (the cells' own source aside: the user wrote it).
    saved = json.dumps([m["content"] for m in notebook.iopub if m["msg_type"] != "execute_input"])
    assert "backend refused ***" in saved and "task-1" in saved
    for secret in (TOKEN, PASSWORD):
        assert secret not in saved, secret
