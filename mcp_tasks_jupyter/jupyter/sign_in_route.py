"""Which way a notebook's sign-in answer comes back to the kernel.

Where JupyterLab runs the extension and the Jupyter server has its sign-in route
(``serverext/``), the extension tells the kernel the route's address as the browser sees it
(``{"type": "oauth", "callback": URL}`` on the tasks channel; on JupyterHub
``https://HUB/user/NAME/mcp-tasks/oauth/callback``): sign-ins then use it as their ``redirect_uri``
and the answer comes through the Jupyter server, whatever machine the browser is on. Everywhere else
(VS Code, Colab, a bare kernel, a server without the extension) the loopback listener waits, and the
sign-in widget takes the address the browser ended on by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jupyter_core.paths import jupyter_runtime_dir

from ..oauth.sign_in import Relay
from ..serverext.relay import CALLBACK_PATH, FOLDER, JupyterServerRelay

log = logging.getLogger(__name__)

#: A sign-in starting this soon after the channel opened waits this long for the front end's word
#: (a notebook run at once: ``%load_ext`` then ``%mcp_connect``).
REPORT_WAIT_S = 3.0
MAX_URL_CHARS = 2000


class SignInRoute:
    """What the front end said about the Jupyter server's sign-in route (nothing yet, none, or its URL)."""

    def __init__(self) -> None:
        self.callback: str | None = None
        self._said: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._said is None:
            self._said = asyncio.Event()
        return self._said

    def reported(self, callback: Any) -> None:
        """The front end's word: the route's URL, or None (no server extension)."""
        self.callback = callback if _is_route(callback) else None
        self._event().set()

    async def relay(self, wait: float) -> Relay | None:
        """The relay for a sign-in starting now (None: the loopback listener); waits up to ``wait``
        seconds for the front end's word when it has not come yet."""
        said = self._event()
        if wait > 0 and not said.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(said.wait(), wait)
        if self.callback is None:
            return None
        relay = JupyterServerRelay(self.callback, Path(jupyter_runtime_dir()) / FOLDER)
        if not relay.ready():
            log.warning("cannot write to %s: signing in without the Jupyter server's route", relay.folder)
            return None
        return relay


def _is_route(url: Any) -> bool:
    if not isinstance(url, str) or len(url) > MAX_URL_CHARS or not url.isprintable():
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return (
        parts.scheme in ("http", "https")
        and bool(parts.netloc)
        and parts.path.endswith("/" + CALLBACK_PATH)
        and not parts.query
        and not parts.fragment
    )
