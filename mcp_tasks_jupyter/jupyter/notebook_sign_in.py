"""Signing in from a notebook: the "Sign in to NAME" link, and what ``%mcp_login`` / ``%mcp_logout`` do.

Every HTTP connection made from a notebook without an ``Authorization`` header is ready to sign in
with OAuth when its server asks (401 with OAuth metadata); a server that asks for credentials but
publishes no OAuth metadata gets the plain "credentials refused" error instead. The link is shown in
the cell that connects (a new browser tab opens the authorization server); the loopback listener on
127.0.0.1 receives the answer while the kernel goes on serving. Where the browser cannot reach the
kernel's loopback (a hub, a remote server), the sign-in widget's field takes the address the browser
ended on (``oauth/answers.py`` checks it like any answer). Once signed in, the link is replaced by one
line, so a saved notebook keeps no sign-in URL.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from IPython.display import display

from ..client import Client
from ..errors import UsageError
from ..oauth import OAuth, OAuthSignIn, TokenStore, finish_sign_in
from ..oauth.sign_in import FindRelay, resource_key

if TYPE_CHECKING:
    from .widgets.sign_in_widget import SignInWidget

_ids = itertools.count(1)
#: JupyterLab's accept-button look from its theme variables (an <a> does not get it from the classes alone).
_BUTTON_STYLE = (
    "display:inline-block;text-decoration:none;padding:4px 12px;margin-right:8px;border-radius:2px;"
    "background:var(--jp-accept-color-normal, var(--jp-brand-color1));color:var(--jp-ui-inverse-font-color1);"
    "font-size:var(--jp-ui-font-size1)"
)


def wants_oauth(target: Any, headers: Mapping[str, str] | None) -> bool:
    """An HTTP target with no credentials of the user's own (an ``Authorization`` header)."""
    return (
        isinstance(target, str)
        and target.startswith(("http://", "https://"))
        and not any(k.lower() == "authorization" for k in (headers or {}))
    )


def notebook_hook(name: str, url: str, settings: OAuth | None, relay: FindRelay | None = None) -> OAuthSignIn:
    """The connection's auth hook, showing its sign-in link in the cell. ``settings`` from mcp.json
    (``"oauth": {...}``) make the sign-in explicit (it is tried even without OAuth metadata).
    ``relay``: the Jupyter server's sign-in route, when JupyterLab says there is one."""
    explicit = settings is not None
    settings = settings or OAuth()
    if settings.open_url is None:
        settings.open_url = SignInLink(name)
    return OAuthSignIn(settings, url, name, implicit=not explicit, relay=relay)


class SignInLink:
    """Shows "Sign in to NAME" (a link that opens a new tab, and a field for the address the browser
    ended on when it cannot reach this kernel) in the current cell's output."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.display_id: str | None = None
        self.widget: SignInWidget | None = None

    def __call__(self, url: str) -> None:
        self.display_id = f"mtj-sign-in-{next(_ids)}"
        name = html.escape(self.name)
        link = (
            f'<div class="mtj-sign-in"><a href="{html.escape(url, quote=True)}" target="_blank" '
            'rel="noopener noreferrer" class="jp-Button jp-mod-styled jp-mod-accept" '
            f'style="{_BUTTON_STYLE}">Sign in to {name}</a> '
            "<span>the server asks you to sign in; this cell waits (the kernel stays free).</span></div>"
        )
        summary = {"text/html": link, "text/plain": f"Sign in to {self.name}: open {url}"}
        from .display import widget_output  # (the widgets import the runtime, which imports this module)
        from .widgets.sign_in_widget import SignInWidget

        self.close_widget()
        self.widget = SignInWidget(self.name, url, self._paste)
        display(widget_output(self.widget, summary), raw=True, display_id=self.display_id)

    async def _paste(self, address: str) -> str:
        return await finish_sign_in(address, server=self.name)

    def done(self, text: str) -> None:
        """Replace the link with one line (a saved notebook keeps no sign-in URL)."""
        if self.display_id is not None:
            bundle = {"text/html": f"<div>{html.escape(text)}</div>", "text/plain": text}
            display(bundle, raw=True, display_id=self.display_id, update=True)
            self.display_id = None
        self.close_widget()

    def close_widget(self) -> None:
        if self.widget is not None:
            self.widget.close()
            self.widget = None


def hook_of(client: Client) -> OAuthSignIn | None:
    auth = client.session.transport.auth
    return auth if isinstance(auth, OAuthSignIn) else None


async def login(name: str, client: Client) -> str:
    """``%mcp_login NAME``: sign in to the connection's server now."""
    hook = hook_of(client)
    if hook is None:
        raise UsageError(
            f"%mcp_login {name}: this connection does not sign in with OAuth "
            "(not HTTP, or it has an Authorization header of its own)"
        )
    await hook.sign_in()
    return f"signed in to {name}"


def logout(name: str, client: Client | None, url: str | None, on_done: Callable[[str], None] = print) -> None:
    """``%mcp_logout NAME``: forget the server's tokens (the live connection's and the stored ones)."""
    hook = hook_of(client) if client is not None else None
    if hook is not None:
        had = hook.sign_out()
    elif url is not None:
        had = TokenStore().delete(resource_key(url))
    else:
        raise UsageError(f"%mcp_logout {name}: no HTTP server of that name is connected or configured")
    on_done(f"signed out of {name}" if had else f"{name}: no sign-in was kept")
