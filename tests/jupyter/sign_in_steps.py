"""Steps the sign-in kernel tests share: find the sign-in widget, wait for the cell to connect."""

from __future__ import annotations

from typing import Any

from tests.jupyter.kernel_harness import Notebook

SIGN_IN_WIDGET = ".SignInWidget"


def is_sign_in_widget(message: dict[str, Any]) -> bool:
    """The comm_open of a sign-in widget."""
    state = message["content"].get("data", {}).get("state", {}) if message["msg_type"] == "comm_open" else {}
    return str(state.get("_anywidget_id", "")).endswith(SIGN_IN_WIDGET)


def wait_connected(nb: Notebook, msg_id: str, name: str) -> None:
    """Until the ``%mcp_connect`` cell ``msg_id`` says it connected ``name``."""
    nb.wait(
        lambda m: (
            m["parent_header"].get("msg_id") == msg_id
            and m["msg_type"] == "stream"
            and f"connected {name}" in m["content"]["text"]
        ),
        what="the connection",
    )
