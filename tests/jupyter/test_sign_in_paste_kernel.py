"""The sign-in widget's paste-back field, in a real kernel against the OAuth-protected demo server: the
browser signs in but cannot reach the kernel's loopback listener (a hub, a remote server), so the person
pastes the address it ended on into the widget (a custom comm message, as the browser sends it).

An address of another sign-in is refused in the widget and the cell goes on waiting; the right one
finishes the sign-in: the cell says "connected", the widget becomes one line, a task runs. The pasted
code never appears in an output or in the widget's state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest

from tests.jupyter.kernel_harness import Notebook, running_kernel
from tests.jupyter.sign_in_steps import is_sign_in_widget, wait_connected
from tests.support.auth_demo import start_auth_demo

pytestmark = pytest.mark.timeout(180)


def ended_on(url: str) -> str:
    """Where a browser that cannot reach the kernel ends after signing in (the redirect, not followed)."""
    with httpx.Client(timeout=10, follow_redirects=False) as http:
        answer = http.get(url)
    assert answer.status_code in (302, 303), answer.text
    return answer.headers["location"]


def changed(address: str, **params: str) -> str:
    parts = urlsplit(address)
    return urlunsplit(parts._replace(query=urlencode({**dict(parse_qsl(parts.query)), **params})))


def widget_update(comm_id: str, key: str) -> Any:
    def fits(message: dict[str, Any]) -> bool:
        content = message["content"]
        return (
            message["msg_type"] == "comm_msg"
            and content.get("comm_id") == comm_id
            and content["data"].get("method") == "update"
            and bool(content["data"].get("state", {}).get(key))
        )

    return fits


def test_a_pasted_address_finishes_the_sign_in_in_the_widget(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with start_auth_demo() as demo, running_kernel(home) as kernel:
        nb = Notebook(kernel)
        nb.run("%load_ext mcp_tasks_jupyter")
        msg_id = kernel.submit(f"%mcp_connect secure {demo.url}")
        opened = nb.wait(is_sign_in_widget, what="the sign-in widget")
        comm_id = opened["content"]["comm_id"]
        state = opened["content"]["data"]["state"]
        assert state["server"] == "secure"
        address = ended_on(state["url"])
        code = dict(parse_qsl(urlsplit(address).query))["code"]

        nb.send_custom(comm_id, {"type": "paste", "address": changed(address, state="not-this-sign-in")})
        refused = nb.wait(widget_update(comm_id, "problem"), what="the refusal in the widget")
        assert "state differs" in refused["content"]["data"]["state"]["problem"]

        nb.send_custom(comm_id, {"type": "paste", "address": address})
        wait_connected(nb, msg_id, "secure")
        nb.wait(
            lambda m: (
                m["msg_type"] == "update_display_data"
                and "signed in to secure" in m["content"]["data"].get("text/plain", "")
            ),
            what="the widget replaced by one line",
        )
        nb.wait(
            lambda m: m["msg_type"] == "comm_close" and m["content"].get("comm_id") == comm_id,
            what="the widget closed",
        )
        nb.run("r = %mcp_task --wait secure:slow_compute seconds=1")
        assert kernel.value("(r.is_error, r.text[:20])")[0] is False
    assert code not in json.dumps([m["content"] for m in nb.iopub])
