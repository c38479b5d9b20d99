"""The Jupyter server's sign-in route: ``{base_url}mcp-tasks/oauth/callback``, behind the server's own
authentication (``web.authenticated``, and ``authorized`` for its authorizer), so no page that is not
signed in to this Jupyter server can reach it.

It looks the answer's ``state`` up among the pending sign-ins of this user's kernels (``relay.py``) and
forwards the answer's query, as it came, to that kernel's loopback listener, which checks ``state``
(and the sign-in then ``iss``) before any code is exchanged. An unknown ``state`` is a 400 and is
forwarded nowhere. ``{base_url}mcp-tasks/oauth/ready`` tells the JupyterLab extension the route is
there.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.httpclient import AsyncHTTPClient

from .relay import CALLBACK_PATH, FOLDER, READY_PATH, listener_port

log = logging.getLogger(__name__)

#: How long the kernel's listener may take to answer the forwarded request.
FORWARD_TIMEOUT_S = 10.0
MAX_QUERY_CHARS = 8 * 1024
RESOURCE = "mcp-tasks-oauth"


def _page(title: str, text: str) -> str:
    return (
        f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<body style='font-family:sans-serif;margin:3em'><h2>{html.escape(title)}</h2>"
        f"<p>{html.escape(text)}</p></body>"
    )


class _Handler(JupyterHandler):
    auth_resource = RESOURCE

    def initialize(self, folder: Path) -> None:
        self.folder = folder

    def set_default_headers(self) -> None:
        super().set_default_headers()
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")  # the code in this URL goes nowhere else


class CallbackHandler(_Handler):
    """The authorization server's answer, handed to the kernel that waits for it."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        state = self.get_query_argument("state", "")
        query = self.request.query
        port = listener_port(self.folder, state) if len(query) <= MAX_QUERY_CHARS else None
        self.set_header("Content-Type", "text/html; charset=utf-8")
        if port is None:
            self.set_status(400)
            self.finish(
                _page(
                    "Sign-in was not completed.",
                    "No notebook is waiting for this sign-in (it ended, or the link is from another one). "
                    "Go back to your notebook and sign in again.",
                )
            )
            return
        answer = await AsyncHTTPClient().fetch(
            f"http://127.0.0.1:{port}/callback?{query}",
            raise_error=False,
            follow_redirects=False,
            request_timeout=FORWARD_TIMEOUT_S,
        )
        if answer.code in (200, 400):
            self.set_status(answer.code)
            self.finish(answer.body)
            return
        log.warning("mcp-tasks sign-in: the kernel's listener answered HTTP %s", answer.code)
        self.set_status(502)
        self.finish(_page("Sign-in was not completed.", "The notebook's kernel did not take the answer."))


class ReadyHandler(_Handler):
    """``{"callback": PATH}``: the route is there (the JupyterLab extension asks)."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish({"callback": CALLBACK_PATH})


def install(serverapp: Any) -> None:
    """Add the routes to ``serverapp``'s web application."""
    web_app = serverapp.web_app
    base_url = web_app.settings["base_url"]
    folder = Path(serverapp.runtime_dir) / FOLDER
    options = {"folder": folder}
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base_url, CALLBACK_PATH), CallbackHandler, options),
            (url_path_join(base_url, READY_PATH), ReadyHandler, options),
        ],
    )
    serverapp.log.info("mcp-tasks-jupyter: sign-in route at %s", url_path_join(base_url, CALLBACK_PATH))
