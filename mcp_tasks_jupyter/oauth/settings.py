"""What a user says about signing in to a server with OAuth: ``mtj.connect(url, auth=mtj.OAuth(...))``."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..redact import register

#: How a sign-in link reaches a person: called with the authorization URL; may be ``async``.
OpenURL = Callable[[str], "Awaitable[Any] | Any"]

MAX_PORT = 65535
#: The grants a client can use: a person signing in (the default), or a service on its own credentials.
GRANTS = ("authorization_code", "client_credentials")


@dataclass
class OAuth:
    """Sign in to an MCP server with OAuth 2.1 (the MCP authorization flow), when it asks for it.

    Every setting is optional: the server's metadata says where to sign in, and the client registers
    itself (dynamic client registration) when no ``client_id`` is given.

    ``client_id`` / ``client_secret``: credentials registered beforehand with the authorization
    server (they are used first, before any registration). ``scopes``: the scopes to ask for
    (default: what the server's challenge names, else what its metadata lists, else none).
    ``redirect_port``: the loopback port (on 127.0.0.1) that receives the sign-in's answer (default:
    a free one, kept with the registration). ``open_url(url)``: shows the sign-in link to a person
    (default: a browser tab, or the URL printed when there is no browser; in a notebook, a "Sign in"
    link in the cell). ``client_metadata_url``: an https URL where this client's metadata document
    is published (Client ID Metadata Documents), used when the authorization server supports them.
    ``token_store``: where tokens are kept (a directory; default: the Jupyter data directory).
    ``sign_in_timeout``: seconds to wait for a person to sign in.

    ``grant``: ``"authorization_code"`` (default: a person signs in) or ``"client_credentials"``
    (headless: papermill, CI, a scheduled job; needs ``client_id`` and ``client_secret``, or
    ``client_secret_file``, a file holding the secret; nobody is ever waited for). The secret is sent
    as the authorization server's metadata prefers (``client_secret_basic``, else ``client_secret_post``).
    """

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scopes: Sequence[str] | str | None = None
    redirect_port: int | None = None
    open_url: OpenURL | None = None
    client_metadata_url: str | None = None
    client_name: str = "mcp-tasks-jupyter"
    token_store: str | os.PathLike[str] | None = None
    sign_in_timeout: float = 300.0
    grant: str = "authorization_code"
    client_secret_file: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        register(self.client_secret)
        if self.grant not in GRANTS:
            raise UsageError(f"OAuth(grant=...) must be one of {', '.join(GRANTS)}, not {self.grant!r}")
        if self.client_secret is not None and self.client_secret_file is not None:
            raise UsageError("OAuth: give client_secret or client_secret_file, not both")
        if self.grant == "client_credentials" and not (
            self.client_id and (self.client_secret or self.client_secret_file)
        ):
            raise UsageError(
                'OAuth(grant="client_credentials") needs client_id and client_secret (or client_secret_file)'
            )
        if self.redirect_port is not None and not (
            isinstance(self.redirect_port, int) and 0 < self.redirect_port <= MAX_PORT
        ):
            raise UsageError(f"OAuth(redirect_port=...) must be a port number 1-65535, not {self.redirect_port!r}")
        if self.client_metadata_url is not None and not self.client_metadata_url.startswith("https://"):
            raise UsageError("OAuth(client_metadata_url=...) must be an https:// URL")
        if not self.sign_in_timeout > 0:
            raise UsageError("OAuth(sign_in_timeout=...) must be a number of seconds > 0")
        if self.open_url is not None and not callable(self.open_url):
            raise UsageError("OAuth(open_url=...) must be a function called with the sign-in URL")

    @property
    def scope_list(self) -> list[str] | None:
        """The scopes asked for, as a list (None: let the server's challenge and metadata decide)."""
        if self.scopes is None:
            return None
        if isinstance(self.scopes, str):
            return self.scopes.split()
        return [str(s) for s in self.scopes]

    def secret(self) -> str | None:
        """The client secret: as given, or read from ``client_secret_file`` now (so a rotated one is used)."""
        if self.client_secret_file is None:
            return self.client_secret
        path = Path(self.client_secret_file)
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise UsageError(f"OAuth(client_secret_file=...): cannot read {path}: {exc.strerror or exc}") from None
        if not text:
            raise UsageError(f"OAuth(client_secret_file=...): {path} is empty")
        register(text)
        return text

    @classmethod
    def from_config(cls, entry: Any, where: str) -> OAuth:
        """The settings an ``mcp.json`` entry's ``"oauth"`` value gives (``true`` or a mapping)."""
        if entry is True:
            return cls()
        if not isinstance(entry, dict):
            raise UsageError(f'{where}: "oauth" must be true or a mapping of settings')
        allowed = {
            "client_id",
            "client_secret",
            "client_secret_file",
            "grant",
            "scopes",
            "redirect_port",
            "client_metadata_url",
            "client_name",
        }
        unknown = sorted(set(entry) - allowed)
        if unknown:
            raise UsageError(
                f'{where}: unknown "oauth" setting(s) {", ".join(unknown)} (known: {", ".join(sorted(allowed))})'
            )
        register(entry.get("client_secret"))
        return cls(**entry)
