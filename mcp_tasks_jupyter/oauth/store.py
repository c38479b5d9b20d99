"""Where sign-ins are kept: one JSON file per server (its resource URL), readable by its owner only.

The default directory is ``mcp-tasks-jupyter/oauth`` under the Jupyter data directory
(``$JUPYTER_DATA_DIR``, else ``$XDG_DATA_HOME/jupyter``, else ``~/.local/share/jupyter``; on macOS
``~/Library/Jupyter``, on Windows ``%APPDATA%/jupyter``); ``$MTJ_TOKENS`` overrides it. The files hold
the client registration (its id and secret, the issuer that issued them), the tokens and the DPoP key
they are bound to; nothing else in the library writes a token or key anywhere. A file is written
whole (a temporary file renamed over it) with mode 0600 in a 0700 directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..redact import register

MAX_RECORD_BYTES = 1 << 20


@dataclass
class ClientRegistration:
    """The client as one authorization server knows it."""

    issuer: str
    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"
    redirect_uri: str | None = None


@dataclass
class Tokens:
    """What the token endpoint gave: ``expires_at`` is a Unix time (None: not said)."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None


@dataclass
class SignIn:
    """Everything kept about one server (``resource``: its URL as connected to): the client
    registration, the tokens, the scopes asked for, the resource indicator the tokens are for, and
    the private key DPoP-bound tokens are bound to (a JWK, RFC 9449)."""

    resource: str
    indicator: str | None = None
    client: ClientRegistration | None = None
    tokens: Tokens | None = None
    scopes: list[str] = field(default_factory=list)
    dpop_key: dict[str, Any] | None = None

    def secrets(self) -> list[str]:
        out = []
        if self.dpop_key and isinstance(self.dpop_key.get("d"), str):
            out.append(self.dpop_key["d"])
        if self.client and self.client.client_secret:
            out.append(self.client.client_secret)
        if self.tokens:
            out.append(self.tokens.access_token)
            if self.tokens.refresh_token:
                out.append(self.tokens.refresh_token)
        return out


def jupyter_data_dir(environ: dict[str, str] | None = None) -> Path:
    """The Jupyter data directory, found as ``jupyter_core.paths.jupyter_data_dir`` finds it."""
    env = os.environ if environ is None else environ
    if env.get("JUPYTER_DATA_DIR"):
        return Path(env["JUPYTER_DATA_DIR"])
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Jupyter"
    if sys.platform == "win32" and env.get("APPDATA"):
        return Path(env["APPDATA"]) / "jupyter"
    xdg = env.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else home / ".local" / "share") / "jupyter"


def default_directory() -> Path:
    configured = os.environ.get("MTJ_TOKENS")
    if configured:
        return Path(configured)
    return jupyter_data_dir() / "mcp-tasks-jupyter" / "oauth"


class TokenStore:
    """Sign-ins by server resource URL, in ``directory`` (default :func:`default_directory`)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_directory()

    def path_for(self, resource: str) -> Path:
        digest = hashlib.sha256(resource.encode()).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    def load(self, resource: str) -> SignIn | None:
        """The sign-in kept for ``resource``, or None (none kept, or the file is not ours to trust)."""
        path = self.path_for(resource)
        try:
            if path.stat().st_size > MAX_RECORD_BYTES:
                return None
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        try:
            sign_in = _from_dict(data)
        except (TypeError, KeyError, ValueError):
            return None
        if sign_in.resource != resource:
            return None
        for secret in sign_in.secrets():
            register(secret)
        return sign_in

    def save(self, sign_in: SignIn) -> None:
        """Write the sign-in (whole, 0600)."""
        for secret in sign_in.secrets():
            register(secret)
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(self.directory, 0o700)
        path = self.path_for(sign_in.resource)
        text = json.dumps(asdict(sign_in), indent=1)
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=self.directory)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def delete(self, resource: str) -> bool:
        """Forget the sign-in for ``resource``; True when there was one."""
        try:
            self.path_for(resource).unlink()
        except FileNotFoundError:
            return False
        return True


def _from_dict(data: dict[str, Any]) -> SignIn:
    client = data.get("client")
    tokens = data.get("tokens")
    return SignIn(
        resource=str(data["resource"]),
        indicator=data.get("indicator") if isinstance(data.get("indicator"), str) else None,
        client=ClientRegistration(**client) if isinstance(client, dict) else None,
        tokens=Tokens(**tokens) if isinstance(tokens, dict) else None,
        scopes=[str(s) for s in data.get("scopes") or []],
        dpop_key=data.get("dpop_key") if isinstance(data.get("dpop_key"), dict) else None,
    )
