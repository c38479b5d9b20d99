"""Where users keep their MCP servers: ``mcp.json``, VS Code's ``.vscode/mcp.json`` and Jupyter AI's
settings, read in one order and turned into ``mcp.json`` entries (``config.parse_entry`` checks them).

The files, in lookup order (the first that defines a name wins; ``%mcp_servers --config`` lists them
all, and which entry each name resolves to):

1. in the kernel's working directory, then in the notebook's (``JPY_SESSION_NAME``) when that is
   another directory: ``mcp.json``; ``.vscode/mcp.json`` (VS Code: ``"servers"``, ``"type"`` stdio /
   http, ``${workspaceFolder}`` is the folder holding ``.vscode``; ``${input:...}`` prompts are VS
   Code's own and are refused with a message naming them); ``.jupyter/mcp/config.json`` (Jupyter AI:
   ``"mcpServers"`` with ``"transport"`` stdio / http / streamable_http and ``"disabled"``);
2. the user's: ``$MTJ_CONFIG`` (a file; or a directory standing for the Jupyter config directory),
   else ``jupyter_core.paths.jupyter_config_dir()`` (``~/.jupyter``): ``mcp.json``,
   ``mcp/config.json`` (Jupyter AI) and ``mcp_servers.json`` (``jupyter_mcp_manager``, the settings
   of Jupyter AI's MCP manager: ``"mcp_servers"``, a list of ``{"name", "type", "url", "headers":
   [{"name", "value"}], "command", "args", "env": [{"name", "value"}]}``).

A disabled entry is listed, never connected. ``${env:VAR}`` works in every file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..redact import safe_url
from .config import FILE_NAME, ConfigError, ServerConfig, parse_entry
from .tables import Table

MCP_JSON = "mcp.json"
VS_CODE = "VS Code"
JUPYTER_AI = "Jupyter AI"
MCP_MANAGER = "Jupyter AI MCP manager"
#: Jupyter AI's ``transport`` values as ``mcp.json`` types (``sse``, the old transport, is refused).
_TRANSPORTS = {
    "stdio": "stdio",
    "http": "http",
    "streamable_http": "http",
    "streamable-http": "http",
    "sse": "sse",
}
_INPUT_REF = re.compile(r"\$\{input:([^}]*)\}")
_WORKSPACE = "${workspaceFolder}"


@dataclass(frozen=True)
class Source:
    """One configuration file and whose layout it has."""

    path: Path
    kind: str


@dataclass(frozen=True)
class Entry:
    """One server as a file defines it: ``entry`` in the ``mcp.json`` layout, ``disabled`` when the
    file says so."""

    name: str
    source: Source
    entry: Any
    disabled: bool = False
    #: Why the entry cannot be used as written (said when it is asked for, not when its file is read).
    problem: str | None = None


def sources(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[Source]:
    """The configuration files to look in, in order (they need not exist; ``$MTJ_CONFIG`` must)."""
    environ = os.environ if environ is None else environ
    cwd = Path.cwd() if cwd is None else cwd
    folders = [cwd]
    session = environ.get("JPY_SESSION_NAME")
    if session and (cwd / session).parent not in folders:
        folders.append((cwd / session).parent)
    found: list[Source] = []
    for folder in folders:
        found += [
            Source(folder / FILE_NAME, MCP_JSON),
            Source(folder / ".vscode" / "mcp.json", VS_CODE),
            Source(folder / ".jupyter" / "mcp" / "config.json", JUPYTER_AI),
        ]
    override = environ.get("MTJ_CONFIG")
    if override:
        user = Path(override).expanduser()
        if not user.exists():
            raise ConfigError(f"MTJ_CONFIG points to {str(user)!r}, which does not exist")
        found += _user_files(user) if user.is_dir() else [Source(user, MCP_JSON)]
    else:
        from jupyter_core.paths import jupyter_config_dir

        found += _user_files(Path(jupyter_config_dir()))
    unique: list[Source] = []
    for source in found:
        if all(source.path != s.path for s in unique):
            unique.append(source)
    return unique


def _user_files(folder: Path) -> list[Source]:
    return [
        Source(folder / FILE_NAME, MCP_JSON),
        Source(folder / "mcp" / "config.json", JUPYTER_AI),
        Source(folder / "mcp_servers.json", MCP_MANAGER),
    ]


def entries(source: Source) -> list[Entry]:
    """The servers ``source`` defines, in the ``mcp.json`` layout ([] when the file does not exist)."""
    data = _read(source.path)
    if data is None:
        return []
    if source.kind == MCP_JSON:
        servers = data.get("mcpServers", data.get("servers", {}))
        if not isinstance(servers, dict):
            raise ConfigError(f'{source.path}: "mcpServers" must be an object of name -> server')
        return [Entry(str(name), source, entry) for name, entry in servers.items()]
    if source.kind == MCP_MANAGER:
        return _manager_entries(source, data)
    key = "servers" if source.kind == VS_CODE else "mcpServers"
    servers = data.get(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f'{source.path}: "{key}" must be an object of name -> server')
    out = []
    for name, entry in servers.items():
        disabled, problem = False, None
        if isinstance(entry, dict):
            if source.kind == VS_CODE:
                try:
                    entry = _vs_code_entry(name, entry, source.path)
                except ConfigError as exc:
                    problem = str(exc)
            elif source.kind == JUPYTER_AI:
                entry, disabled = _jupyter_ai_entry(entry)
        out.append(Entry(str(name), source, entry, disabled, problem))
    return out


def load_server(name: str, *, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> ServerConfig:
    """Find ``name`` in the ``mcp.json`` files (see the module docstring) and expand it."""
    environ = os.environ if environ is None else environ
    found, sources, seen = find_entry(name, environ, cwd)
    if found is not None:
        return load(found, environ)
    looked = ", ".join(str(s.path) for s in sources)
    known = f" (servers defined: {', '.join(sorted(seen))})" if seen else ""
    raise ConfigError(
        f"no server named {name!r} in {looked}{known}; give a URL or command: %mcp_connect {name} URL_OR_COMMAND"
    )


def find_entry(
    name: str, environ: Mapping[str, str], cwd: Path | None
) -> tuple[Entry | None, list[Source], list[str]]:
    """The first enabled entry named ``name`` (None: none), the files looked in, and every name seen."""
    looked = sources(environ, cwd)
    seen: list[str] = []
    for source in looked:
        for entry in entries(source):
            if entry.name == name and not entry.disabled:
                return entry, looked, seen
            if entry.name not in seen:
                seen.append(entry.name)
    return None, looked, seen


def load(entry: Entry, environ: Mapping[str, str] | None = None) -> ServerConfig:
    """The entry checked and expanded (``config.parse_entry``)."""
    if entry.problem is not None:
        raise ConfigError(entry.problem)
    return parse_entry(entry.name, entry.entry, entry.source.path, environ)


def config_table(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Table:
    """``%mcp_servers --config``: every configured server, the file it came from and whether a
    connection by that name would use it (secrets never shown: targets as written, before expansion)."""
    environ = os.environ if environ is None else environ
    rows: list[list[str]] = []
    used: set[str] = set()
    looked = sources(environ, cwd)
    for source in looked:
        try:
            found = entries(source)
        except ConfigError as exc:
            rows.append(["-", str(source.path), source.kind, "-", "-", f"unreadable: {exc}"])
            continue
        for entry in found:
            transport, target = _shown(entry.entry)
            if entry.disabled:
                state = "disabled"
            elif entry.name in used:
                state = "shadowed (an earlier file defines it)"
            else:
                try:
                    config = load(entry, environ)
                    transport, target = config.transport, config.display_target
                    state = "used"
                except ConfigError as exc:
                    state = f"error: {exc}"
                used.add(entry.name)
            rows.append([entry.name, str(source.path), source.kind, transport, safe_url(target), state])
    notes = ["Looked in, in order: " + ", ".join(str(s.path) for s in looked)]
    if not rows:
        notes.insert(0, "No server is configured. Connect with %mcp_connect NAME URL_OR_COMMAND.")
    return Table("Configured MCP servers", ["name", "file", "layout", "transport", "target", "state"], rows, notes)


# -- the layouts -------------------------------------------------------------------------------


def _read(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def _vs_code_entry(name: str, entry: dict[str, Any], path: Path) -> dict[str, Any]:
    """VS Code's entry: ``${workspaceFolder}`` expanded; ``${input:...}`` refused (VS Code prompts for it)."""
    workspace = str(path.parent.parent)

    def expand(value: Any) -> Any:
        if isinstance(value, str):
            inputs = _INPUT_REF.findall(value)
            if inputs:
                raise ConfigError(
                    f"{path}: server {name!r} uses ${{input:{inputs[0]}}}, a VS Code prompt; "
                    "use ${env:VAR} with the value in an environment variable instead"
                )
            return value.replace(_WORKSPACE, workspace)
        if isinstance(value, list):
            return [expand(v) for v in value]
        if isinstance(value, dict):
            return {k: expand(v) for k, v in value.items()}
        return value

    return {k: expand(v) for k, v in entry.items() if k != "envFile"}


def _jupyter_ai_entry(entry: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    out = {k: v for k, v in entry.items() if k not in ("transport", "disabled")}
    transport = entry.get("transport")
    if transport is not None:
        out["type"] = _TRANSPORTS.get(str(transport), str(transport))
    return out, entry.get("disabled") is True


def _manager_entries(source: Source, data: dict[str, Any]) -> list[Entry]:
    servers = data.get("mcp_servers", [])
    if not isinstance(servers, list):
        raise ConfigError(f'{source.path}: "mcp_servers" must be a list of servers')
    out = []
    for i, server in enumerate(servers):
        if not isinstance(server, dict) or not isinstance(server.get("name"), str):
            raise ConfigError(f'{source.path}: mcp_servers[{i}] must be an object with a "name"')
        entry = {k: v for k, v in server.items() if k not in ("name", "disabled", "headers", "env")}
        for key in ("headers", "env"):
            if key in server:
                entry[key] = _pairs(server[key], f"{source.path}: server {server['name']!r}: {key}")
        out.append(Entry(server["name"], source, entry, server.get("disabled") is True))
    return out


def _pairs(value: Any, where: str) -> dict[str, Any]:
    """``[{"name": ..., "value": ...}]`` as a mapping (a mapping is taken as it is)."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, list) or not all(isinstance(p, dict) and "name" in p for p in value):
        raise ConfigError(f'{where} must be a list of {{"name": ..., "value": ...}}')
    return {str(p["name"]): p.get("value", "") for p in value}


def _shown(entry: Any) -> tuple[str, str]:
    """(transport, target as written) of a raw entry, for a row that could not be parsed."""
    if not isinstance(entry, dict):
        return "-", "-"
    if "url" in entry and isinstance(entry["url"], str):
        return "http", entry["url"]
    raw = entry.get("args")
    args: list[Any] = raw if isinstance(raw, list) else []
    return "stdio", " ".join(str(a) for a in [entry.get("command", "?"), *args])


__all__ = [
    "JUPYTER_AI",
    "MCP_JSON",
    "MCP_MANAGER",
    "VS_CODE",
    "Entry",
    "Source",
    "config_table",
    "entries",
    "find_entry",
    "load",
    "load_server",
    "sources",
]
