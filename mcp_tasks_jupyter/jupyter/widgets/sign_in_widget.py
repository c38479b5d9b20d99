"""The sign-in widget: "Sign in to NAME" and a field for the address the browser ended on.

The link opens the authorization server in a new tab. Where the browser cannot reach the kernel's
loopback listener (JupyterHub, Binder, a server behind SSH, VS Code or Colab on another machine), the
sign-in ends on a page that does not load; its address carries the answer, and the person pastes it
into the field. The browser sends it as a custom message (never a trait: the code in it is not kept in
the widget's state or a saved notebook); ``paste`` (``oauth.answers.finish_sign_in``) checks it
(``state``, ``iss``) and finishes the sign-in, or the reason it was refused is shown under the field.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anywidget
import traitlets as t

from ...errors import MCPError
from ..kernel_loop import on_kernel_loop
from . import front_end

log = logging.getLogger(__name__)

Paste = Callable[[str], Awaitable[str]]


class SignInWidget(anywidget.AnyWidget):
    """One sign-in waiting for a person (shown by ``jupyter/notebook_sign_in.py``'s link)."""

    _esm = front_end.esm("signin")
    _css = front_end.css("signin")

    #: The connection's name.
    server = t.Unicode("").tag(sync=True)
    #: The authorization URL (the front end links it only when it is http or https).
    url = t.Unicode("").tag(sync=True)
    #: Why the last pasted address was refused.
    problem = t.Unicode("").tag(sync=True)
    #: A pasted address is being checked.
    busy = t.Bool(False).tag(sync=True)

    def __init__(self, server: str, url: str, paste: Paste) -> None:
        super().__init__(server=server, url=url)
        self._paste = paste
        self.on_msg(on_kernel_loop(self._on_front_end_msg))

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "paste" or self.busy:
            return
        address = content.get("address")
        if not isinstance(address, str):
            return
        self.busy = True
        from ..runtime import get_runtime

        get_runtime().spawn(self._finish(address), name=f"mcp-sign-in-paste {self.server}")

    async def _finish(self, address: str) -> None:
        try:
            await self._paste(address)
            self.problem = ""
        except MCPError as exc:
            self.problem = str(exc)  # errors are scrubbed; none carries the code
        except Exception:
            log.exception("%s: finishing the sign-in with a pasted address failed", self.server)
            self.problem = "finishing the sign-in failed (see the kernel's log)"
        finally:
            self.busy = False

    def __repr__(self) -> str:
        return f"<sign-in to {self.server}>"
