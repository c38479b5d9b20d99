"""What a user says about signing in to a server with OAuth: ``mtj.connect(url, auth=mtj.OAuth(...))``."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..redact import register
from .assertions import register_key_text

#: How a sign-in link reaches a person: called with the authorization URL; may be ``async``.
OpenURL = Callable[[str], "Awaitable[Any] | Any"]

MAX_PORT = 65535
#: The grants a client can use: a person signing in (the default), or headless: a service on its own
#: credentials, a workload's identity token (workload identity federation), an enterprise identity
#: provider's token exchanged for an authorization grant (enterprise-managed authorization).
GRANTS = ("authorization_code", "client_credentials", "jwt_bearer", "enterprise")
HEADLESS_GRANTS = GRANTS[1:]
#: The settings that hold a secret (``${env:...}`` values in them are secrets; never shown).
SECRET_SETTINGS = frozenset({"client_secret", "private_key", "assertion", "idp_client_secret"})
#: The settings an ``mcp.json`` ``"oauth"`` mapping may give.
CONFIG_SETTINGS = (
    "client_id",
    "client_secret",
    "client_secret_file",
    "private_key",
    "private_key_file",
    "signing_algorithm",
    "grant",
    "assertion",
    "assertion_file",
    "assertion_env",
    "idp_issuer",
    "idp_token_endpoint",
    "idp_client_id",
    "idp_client_secret",
    "dpop",
    "scopes",
    "redirect_port",
    "client_metadata_url",
    "client_name",
)


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

    ``grant``: ``"authorization_code"`` (default: a person signs in), or one of the headless grants,
    which never wait for a person (papermill, CI, a scheduled job) and fail at once when refused:

    - ``"client_credentials"``: the client's own credentials; needs ``client_id`` and either a secret
      (``client_secret``, or ``client_secret_file``, read each time; sent as the authorization
      server's metadata prefers, ``client_secret_basic`` else ``client_secret_post``) or a private key
      (``private_key``, PEM text or a private JWK, or ``private_key_file``, which must not be readable
      by others): ``private_key_jwt``, a signed client assertion (RFC 7523), ``signing_algorithm``
      (default: from the key, ES256 for a P-256 key);
    - ``"jwt_bearer"``: workload identity federation, the JWT bearer grant (RFC 7523 section 2.1) with
      a token the platform gives the workload (``assertion``, or ``assertion_file`` or
      ``assertion_env``, read afresh each time: a CI token that rotates is used as it is now);
      ``client_id`` and a secret or key when the authorization server wants them;
    - ``"enterprise"``: enterprise-managed authorization: the identity provider's ID token (the
      ``assertion`` settings) is exchanged at the identity provider (``idp_issuer``, its metadata
      found, or ``idp_token_endpoint``; as ``idp_client_id``, with ``idp_client_secret`` if it has
      one) for an authorization grant for this server (RFC 8693 token exchange, an ID-JAG), which the
      JWT bearer grant turns into tokens at the server's authorization server (as ``client_id`` with
      its secret or key).

    ``dpop``: bind tokens to a key this client keeps (RFC 9449): None (default) when the authorization
    server supports it, True always, False never. The key is made per server and kept in the token
    store; every request then carries a fresh proof.
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
    private_key: str | None = field(default=None, repr=False)
    private_key_file: str | os.PathLike[str] | None = None
    signing_algorithm: str | None = None
    assertion: str | Callable[[], str] | None = field(default=None, repr=False)
    assertion_file: str | os.PathLike[str] | None = None
    assertion_env: str | None = None
    idp_issuer: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)
    dpop: bool | None = None

    def __post_init__(self) -> None:
        for secret in (self.client_secret, self.idp_client_secret):
            register(secret)
        register_key_text(self.private_key)
        if isinstance(self.assertion, str):
            register(self.assertion)
        if self.grant not in GRANTS:
            raise UsageError(f"OAuth(grant=...) must be one of {', '.join(GRANTS)}, not {self.grant!r}")
        self._check_one_of("client_secret", "client_secret_file", "private_key", "private_key_file")
        self._check_one_of("assertion", "assertion_file", "assertion_env")
        self._check_one_of("idp_issuer", "idp_token_endpoint")
        self._check_grant()
        if self.dpop not in (None, True, False):
            raise UsageError("OAuth(dpop=...) must be True, False or None (when the server supports it)")
        if self.assertion is not None and not isinstance(self.assertion, str) and not callable(self.assertion):
            raise UsageError("OAuth(assertion=...) must be the token (a string) or a function returning it")
        for name in ("idp_issuer", "idp_token_endpoint"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, str) and value.startswith(("https://", "http://"))):
                raise UsageError(f"OAuth({name}=...) must be an http(s) URL")
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

    def _check_one_of(self, *names: str) -> None:
        given = [name for name in names if getattr(self, name) is not None]
        if len(given) > 1:
            raise UsageError(f"OAuth: give one of {', '.join(names)}, not {' and '.join(given)}")

    @property
    def has_credentials(self) -> bool:
        """Whether a secret or a private key was given for ``client_id``."""
        return any(
            getattr(self, name) is not None
            for name in ("client_secret", "client_secret_file", "private_key", "private_key_file")
        )

    @property
    def has_assertion(self) -> bool:
        return any(getattr(self, name) is not None for name in ("assertion", "assertion_file", "assertion_env"))

    @property
    def headless(self) -> bool:
        """Whether the grant runs without a person (nobody is ever waited for)."""
        return self.grant in HEADLESS_GRANTS

    def _check_grant(self) -> None:
        grant = f'OAuth(grant="{self.grant}")'
        if self.grant == "client_credentials" and not (self.client_id and self.has_credentials):
            raise UsageError(
                f"{grant} needs client_id and client_secret (or client_secret_file, private_key, private_key_file)"
            )
        if self.grant in ("jwt_bearer", "enterprise") and not self.has_assertion:
            raise UsageError(f"{grant} needs the identity token: assertion, assertion_file or assertion_env")
        if self.grant == "enterprise":
            if not (self.idp_issuer or self.idp_token_endpoint) or not self.idp_client_id:
                raise UsageError(
                    f"{grant} needs the identity provider: idp_issuer (or idp_token_endpoint) and idp_client_id"
                )
            if not self.client_id:
                raise UsageError(f"{grant} needs client_id (the client at the server's authorization server)")
        if self.has_credentials and not self.client_id:
            raise UsageError("OAuth: a client secret or private key needs its client_id")

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
        return read_secret_file(self.client_secret_file, "client_secret_file")

    def identity_assertion(self) -> str:
        """The identity token as it is now: ``assertion`` (called, if a function), else read afresh
        from ``assertion_file`` or the variable ``assertion_env`` (a rotating token is used as it is)."""
        if self.assertion_file is not None:
            return read_secret_file(self.assertion_file, "assertion_file")
        if self.assertion_env is not None:
            value = os.environ.get(self.assertion_env, "").strip()
            if not value:
                raise UsageError(
                    f"OAuth(assertion_env=...): the variable {self.assertion_env} is not set or empty"
                )
            register(value)
            return value
        given = self.assertion() if callable(self.assertion) else self.assertion
        if not isinstance(given, str) or not given.strip():
            raise UsageError("OAuth(assertion=...): no identity token (empty)")
        register(given.strip())
        return given.strip()

    @classmethod
    def from_config(cls, entry: Any, where: str) -> OAuth:
        """The settings an ``mcp.json`` entry's ``"oauth"`` value gives (``true`` or a mapping)."""
        if entry is True:
            return cls()
        if not isinstance(entry, dict):
            raise UsageError(f'{where}: "oauth" must be true or a mapping of settings')
        unknown = sorted(set(entry) - set(CONFIG_SETTINGS))
        if unknown:
            raise UsageError(
                f'{where}: unknown "oauth" setting(s) {", ".join(unknown)} '
                f"(known: {', '.join(sorted(CONFIG_SETTINGS))})"
            )
        for name in SECRET_SETTINGS:
            register(entry.get(name))
        return cls(**entry)


def read_secret_file(path: str | os.PathLike[str], setting: str) -> str:
    """A secret kept in a file (whitespace around it dropped), registered as a secret; read when needed."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise UsageError(f"OAuth({setting}=...): cannot read {where}: {why}") from None
    if not text:
        raise UsageError(f"OAuth({setting}=...): {where} is empty")
    register(text)
    return text
