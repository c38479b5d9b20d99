"""One server entry of ``mcp.json``: its layout, ``${env:VAR}``, and the :class:`ServerConfig` it makes.

Layout (the one Claude Desktop, Cursor and others use; ``"servers"`` as the top key works too)::

    {"mcpServers": {
        "demo":   {"command": "python", "args": ["-m", "mcp_tasks_jupyter.demo"], "env": {"K": "V"}},
        "remote": {"url": "https://example.org/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
    }}

An entry may say ``"type": "stdio"`` (needs ``command``) or ``"type": "http"`` /
``"streamable-http"`` (needs ``url``); without ``type`` the keys decide. Other keys are ignored.
``"dialect"`` (``auto``, ``2025-11-25``, ...) is honoured when present.

Lookup order for ``%mcp_connect NAME`` (the first file that defines NAME wins; the files are read,
and ``load_server`` finds NAME, in ``config_sources.py``):

1. ``mcp.json`` in the kernel's working directory (next to the notebook);
2. ``mcp.json`` next to the notebook named by ``JPY_SESSION_NAME`` (set by Jupyter Server), when
   that is another directory;
3. the user-level file: ``$MTJ_CONFIG`` when set (a file, or a directory holding ``mcp.json``),
   else ``mcp.json`` in ``jupyter_core.paths.jupyter_config_dir()`` (e.g. ``~/.jupyter``).

Beside each ``mcp.json``, VS Code's ``.vscode/mcp.json`` and Jupyter AI's MCP settings are read too
(``config_sources.py`` has the whole order and their layouts; ``%mcp_servers --config`` lists them).

``${env:VAR}`` anywhere in a string value is replaced by the environment variable VAR; a missing
variable is an error naming the variable and the server. Header values and env values (and
whatever ``${env:...}`` produced) are secrets: no repr, message or table shows them (the runtime
registers them with ``redact.py`` on connecting); nor does any URL userinfo.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..oauth import OAuth
from ..oauth.settings import SECRET_SETTINGS
from ..redact import safe_url

FILE_NAME = "mcp.json"
ENV_REF = re.compile(r"\$\{env:([^}]*)\}")
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
#: Secret values shorter than this are not scrubbed from messages (they would mangle them).
MIN_SECRET_LEN = 3


class ConfigError(UsageError):
    """``mcp.json`` is missing, unreadable, or does not describe the server asked for."""


@dataclass(frozen=True)
class ServerConfig:
    """One server entry, ready for ``connect``: ``target`` is a URL or an argv list."""

    name: str
    source: Path
    target: str | list[str]
    headers: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    dialect: str | None = None
    #: The target as written in the file (``${env:...}`` not expanded): safe to show.
    display_target: str = ""
    #: Every value that must never be shown (header and env values, expanded variables).
    secrets: frozenset[str] = frozenset()
    #: ``"oauth"``: settings (sign in with these), False (never sign in), None (when the server asks).
    oauth: OAuth | bool | None = None
    #: ``"apps": false``: this server's MCP Apps views are not drawn (the plain result is), nor declared.
    apps: bool = True

    @property
    def transport(self) -> str:
        return "http" if isinstance(self.target, str) else "stdio"

    def __repr__(self) -> str:
        target = safe_url(self.display_target)
        return (
            f"ServerConfig(name={self.name!r}, source={str(self.source)!r}, transport={self.transport!r}, "
            f"target={target!r}, headers={sorted(self.headers)}, env={sorted(self.env)})"
        )

    __str__ = __repr__


def parse_entry(name: str, entry: Any, source: Path, environ: Mapping[str, str] | None = None) -> ServerConfig:
    """Check one server entry and expand ``${env:VAR}`` in its strings."""
    environ = os.environ if environ is None else environ
    where = f"{source}: server {name!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f'{where} must be an object with "command" or "url"')
    secrets: set[str] = set()

    def expand(value: Any, what: str, secret: bool = False) -> str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {what} must be a string")

        def substitute(match: re.Match[str]) -> str:
            var = match.group(1)
            if var not in environ:
                raise ConfigError(f"{where} uses ${{env:{var}}} in {what}, but {var} is not set")
            secrets.add(environ[var])
            return environ[var]

        expanded = ENV_REF.sub(substitute, value)
        if secret:
            secrets.add(expanded)
        return expanded

    def table(key: str) -> dict[str, str]:
        raw = entry.get(key) or {}
        if not isinstance(raw, dict):
            raise ConfigError(f'{where}: "{key}" must be an object of name -> string')
        return {str(k): expand(v, f"{key}.{k}", secret=True) for k, v in raw.items()}

    kind = entry.get("type")
    if kind is not None and kind not in ("stdio", *HTTP_TYPES):
        raise ConfigError(f'{where}: unsupported "type": {kind!r} (use "stdio" or "http")')
    dialect = entry.get("dialect")
    if dialect is not None and not isinstance(dialect, str):
        raise ConfigError(f'{where}: "dialect" must be a string')
    apps = entry.get("apps", True)
    if not isinstance(apps, bool):
        raise ConfigError(f'{where}: "apps" must be true or false')
    wants_http = kind in HTTP_TYPES or (kind is None and "url" in entry and "command" not in entry)
    if wants_http:
        if "url" not in entry:
            raise ConfigError(f'{where} has "type": {kind!r} but no "url"')
        url = expand(entry["url"], "url")
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f'{where}: "url" must start with http:// or https://')
        if entry.get("env"):
            raise ConfigError(f'{where}: "env" applies to stdio servers; this one has a url')
        oauth = entry.get("oauth")
        if isinstance(oauth, dict):
            oauth = {
                k: expand(v, f"oauth.{k}", secret=k in SECRET_SETTINGS) if isinstance(v, str) else v
                for k, v in oauth.items()
            }
        if oauth is not None and oauth is not False:
            try:
                oauth = OAuth.from_config(oauth, where)
            except (UsageError, TypeError) as exc:
                raise ConfigError(str(exc)) from None
        return ServerConfig(
            name,
            source,
            url,
            headers=table("headers"),
            dialect=dialect,
            display_target=entry["url"],
            secrets=_scrubbable(secrets),
            oauth=oauth,
            apps=apps,
        )
    if "command" not in entry:
        raise ConfigError(f'{where} needs "command" (stdio) or "url" (HTTP)')
    command = expand(entry["command"], "command")
    args = entry.get("args") or []
    if not isinstance(args, list):
        raise ConfigError(f'{where}: "args" must be a list of strings')
    argv = [command, *(expand(a, f"args[{i}]") for i, a in enumerate(args))]
    if entry.get("headers"):
        raise ConfigError(f'{where}: "headers" apply to HTTP servers; this one has a command')
    if entry.get("oauth"):
        raise ConfigError(f'{where}: "oauth" applies to HTTP servers; this one has a command')
    display = " ".join([entry["command"], *(str(a) for a in args)])
    return ServerConfig(
        name,
        source,
        argv,
        env=table("env"),
        dialect=dialect,
        display_target=display,
        secrets=_scrubbable(secrets),
        apps=apps,
    )


def _scrubbable(values: set[str]) -> frozenset[str]:
    return frozenset(v for v in values if len(v) >= MIN_SECRET_LEN)


__all__ = [
    "ConfigError",
    "ServerConfig",
    "parse_entry",
]
