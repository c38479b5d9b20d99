"""The Jupyter Server extension: the sign-in's redirect under the server's ``base_url``.

``pip install mcp-tasks-jupyter`` enables it (``jupyter-config/jupyter_server_config.d``). It serves
``{base_url}mcp-tasks/oauth/callback``, behind the server's own authentication, so that a browser that
cannot reach the kernel's 127.0.0.1 (JupyterHub, Binder, a server behind SSH) still brings the
authorization server's answer to the kernel that waits for it (``relay.py``; ``handlers.py``). Nothing
here is imported unless a Jupyter server loads the extension.
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "mcp_tasks_jupyter.serverext"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from .handlers import install  # jupyter_server and tornado: there when a Jupyter server loads this

    install(serverapp)
