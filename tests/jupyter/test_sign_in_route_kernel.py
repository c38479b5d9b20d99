"""A notebook's sign-in through the Jupyter server's route, in a real kernel: JupyterLab (the server
extension enabled as the wheel enables it) under a JupyterHub-style ``base_url`` (``/user/alice/``),
the OAuth-protected demo server, and a kernel sharing the server's runtime directory. The test speaks
for the JupyterLab extension on the tasks channel (``{"type": "oauth", "callback": URL}``, as
``labextension/src/signin.ts`` sends it) and for the browser (httpx), which reaches only the
authorization server and the Jupyter server: the answer comes through
``/user/alice/mcp-tasks/oauth/callback`` and the cell connects.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest

from tests.browser.lab import running_lab
from tests.jupyter.kernel_harness import Notebook, running_kernel
from tests.jupyter.sign_in_steps import is_sign_in_widget, wait_connected
from tests.support.auth_demo import start_auth_demo

pytestmark = pytest.mark.timeout(240)


def test_the_answer_comes_back_through_the_jupyter_server(tmp_path: Path) -> None:
    root, lab_home, home = tmp_path / "root", tmp_path / "lab", tmp_path / "kernel"
    root.mkdir()
    home.mkdir()
    with (
        start_auth_demo() as demo,
        running_lab(root, lab_home, base_url="/user/alice/") as lab,
        running_kernel(home, JUPYTER_RUNTIME_DIR=str(lab_home / "runtime")) as kernel,
    ):
        nb = Notebook(kernel)
        nb.run("%load_ext mcp_tasks_jupyter")
        callback = f"{lab.url}/mcp-tasks/oauth/callback"
        channel = uuid.uuid4().hex
        nb.send_shell(
            "comm_open", {"comm_id": channel, "target_name": "mcp_tasks_jupyter.tasks", "data": {"type": "hello"}}
        )
        nb.send_shell("comm_msg", {"comm_id": channel, "data": {"type": "oauth", "callback": callback}})

        msg_id = kernel.submit(f"%mcp_connect secure {demo.url}")
        opened = nb.wait(is_sign_in_widget, what="the sign-in widget")
        url = opened["content"]["data"]["state"]["url"]
        with httpx.Client(timeout=15, follow_redirects=False) as browser:
            redirect = browser.get(url)
            assert redirect.status_code in (302, 303), redirect.text
            location = redirect.headers["location"]
            assert location.startswith(f"{callback}?"), location
            answer = browser.get(location, headers={"Authorization": f"token {lab.token}"})
        assert answer.status_code == 200 and "Signed in" in answer.text, answer.text
        wait_connected(nb, msg_id, "secure")
        nb.run("r = %mcp_task --wait secure:slow_compute seconds=1")
        assert kernel.value("r.is_error") is False
