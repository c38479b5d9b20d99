"""Named servers from mcp.json: lookup order, both layouts, ${env:VAR}, and secrets kept out of sight."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_jupyter.errors import UsageError
from mcp_tasks_jupyter.jupyter.config import ConfigError, ServerConfig
from mcp_tasks_jupyter.jupyter.config_sources import MCP_JSON, load_server, sources
from mcp_tasks_jupyter.redact import scrub_values

SECRET = "tok-9f8e7d6c5b"


def write(directory: Path, servers: dict[str, Any], key: str = "mcpServers") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "mcp.json"
    path.write_text(json.dumps({key: servers}))
    return path


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A notebook directory (the kernel's cwd), another notebook directory, a user directory."""
    dirs = {name: tmp_path / name for name in ("cwd", "notebooks", "user")}
    for directory in dirs.values():
        directory.mkdir()
    return dirs


def env_for(places: dict[str, Path], **extra: str) -> dict[str, str]:
    return {"MTJ_CONFIG": str(places["user"]), **extra}


def test_lookup_order_cwd_then_notebook_dir_then_user(places: dict[str, Path]) -> None:
    write(
        places["user"],
        {"a": {"url": "http://user/a"}, "b": {"url": "http://user/b"}, "c": {"url": "http://user/c"}},
    )
    write(places["notebooks"], {"a": {"url": "http://nb/a"}, "b": {"url": "http://nb/b"}})
    write(places["cwd"], {"a": {"url": "http://cwd/a"}})
    environ = env_for(places, JPY_SESSION_NAME=str(places["notebooks"] / "analysis.ipynb"))
    found = {name: load_server(name, environ=environ, cwd=places["cwd"]) for name in "abc"}
    assert {n: c.target for n, c in found.items()} == {
        "a": "http://cwd/a",
        "b": "http://nb/b",
        "c": "http://user/c",
    }
    assert found["b"].source == places["notebooks"] / "mcp.json"
    assert [s.path for s in sources(environ, places["cwd"]) if s.kind == MCP_JSON] == [
        places["cwd"] / "mcp.json",
        places["notebooks"] / "mcp.json",
        places["user"] / "mcp.json",
    ]


def test_jupyter_config_dir_is_the_user_level_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jcfg"))
    write(tmp_path / "jcfg", {"home": {"command": "prog"}})
    config = load_server("home", environ={}, cwd=tmp_path / "elsewhere")
    assert config.target == ["prog"] and config.source == tmp_path / "jcfg" / "mcp.json"


def test_mtj_config_may_name_a_file_and_must_exist(tmp_path: Path) -> None:
    path = write(tmp_path / "custom", {"x": {"command": "prog", "args": ["--flag"]}})
    renamed = path.rename(tmp_path / "custom" / "servers.json")
    assert load_server("x", environ={"MTJ_CONFIG": str(renamed)}, cwd=tmp_path).target == ["prog", "--flag"]
    with pytest.raises(ConfigError, match=r"MTJ_CONFIG points to .*, which does not exist"):
        load_server("x", environ={"MTJ_CONFIG": str(tmp_path / "missing.json")}, cwd=tmp_path)


def test_relative_session_name_is_taken_from_the_kernel_directory(places: dict[str, Path]) -> None:
    write(places["cwd"] / "sub", {"rel": {"url": "http://sub/rel"}})
    environ = env_for(places, JPY_SESSION_NAME="sub/notebook.ipynb")
    assert load_server("rel", environ=environ, cwd=places["cwd"]).target == "http://sub/rel"


def test_both_layouts_and_types(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "local": {"command": "python", "args": ["-m", "srv"], "env": {"K": "v1"}},
            "remote": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer x1"}},
            "typed-stdio": {"type": "stdio", "command": "prog"},
            "typed-http": {"type": "http", "url": "http://h/mcp"},
            "streamable": {"type": "streamable-http", "url": "http://h/s"},
            "dialected": {"url": "http://h/d", "dialect": "2025-11-25"},
            "no-views": {"command": "prog", "apps": False},
        },
    )
    environ = {"MTJ_CONFIG": str(tmp_path / "none-here")}
    (tmp_path / "none-here").mkdir()
    get = lambda name: load_server(name, environ=environ, cwd=tmp_path)  # noqa: E731
    local = get("local")
    assert (local.transport, local.target, local.env, local.headers) == (
        "stdio",
        ["python", "-m", "srv"],
        {"K": "v1"},
        {},
    )
    remote = get("remote")
    assert (remote.transport, remote.target, remote.headers) == (
        "http",
        "https://h/mcp",
        {"Authorization": "Bearer x1"},
    )
    assert get("typed-stdio").target == ["prog"]
    assert get("typed-http").target == "http://h/mcp" and get("streamable").target == "http://h/s"
    assert get("dialected").dialect == "2025-11-25"
    assert get("no-views").apps is False and get("local").apps is True  # MCP Apps views drawn unless false


def test_vs_code_layout_with_servers_key(tmp_path: Path) -> None:
    write(tmp_path, {"vs": {"type": "http", "url": "http://h/vs"}}, key="servers")
    assert load_server("vs", environ={"MTJ_CONFIG": str(tmp_path)}, cwd=tmp_path).target == "http://h/vs"


def test_env_references_are_expanded_everywhere(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "s": {
                "command": "${env:PY}",
                "args": ["-m", "${env:MODULE}", "--key=${env:TOKEN}"],
                "env": {"API_KEY": "${env:TOKEN}", "PLAIN": "literal-value"},
            },
            "h": {"url": "https://${env:HOST}/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
        },
    )
    environ = {
        "MTJ_CONFIG": str(tmp_path),
        "PY": "/usr/bin/python3",
        "MODULE": "srv",
        "TOKEN": SECRET,
        "HOST": "example.org",
    }
    stdio = load_server("s", environ=environ, cwd=tmp_path)
    assert stdio.target == ["/usr/bin/python3", "-m", "srv", f"--key={SECRET}"]
    assert stdio.env == {"API_KEY": SECRET, "PLAIN": "literal-value"}
    assert stdio.display_target == "${env:PY} -m ${env:MODULE} --key=${env:TOKEN}"
    assert SECRET in stdio.secrets and "literal-value" in stdio.secrets
    http = load_server("h", environ=environ, cwd=tmp_path)
    assert http.target == "https://example.org/mcp" and http.headers == {"Authorization": f"Bearer {SECRET}"}
    assert http.display_target == "https://${env:HOST}/mcp"


def test_missing_variable_names_the_variable_and_the_server_not_the_value(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"s": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${env:NOPE}", "X-Other": SECRET}}},
    )
    with pytest.raises(ConfigError) as caught:
        load_server("s", environ={"MTJ_CONFIG": str(tmp_path)}, cwd=tmp_path)
    message = str(caught.value)
    assert "NOPE is not set" in message and "server 's'" in message and "headers.Authorization" in message
    assert SECRET not in message
    assert isinstance(caught.value, UsageError)


def test_secrets_never_in_reprs(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "s": {"command": "prog", "env": {"API_KEY": SECRET}},
            "h": {"url": "https://h/mcp", "headers": {"Authorization": f"Bearer {SECRET}"}},
        },
    )
    for name in ("s", "h"):
        config = load_server(name, environ={"MTJ_CONFIG": str(tmp_path)}, cwd=tmp_path)
        assert SECRET not in repr(config) and SECRET not in str(config)
        assert ("API_KEY" in repr(config)) or ("Authorization" in repr(config))
    assert isinstance(config, ServerConfig)
    assert scrub_values(f"failed with Bearer {SECRET}!", {SECRET, "x"}) == "failed with Bearer ***!"


@pytest.mark.parametrize(
    "entry, expected",
    [
        ("not an object", 'must be an object with "command" or "url"'),
        ({}, 'needs "command" (stdio) or "url" (HTTP)'),
        ({"type": "sse", "url": "http://h"}, "unsupported \"type\": 'sse'"),
        ({"type": "http", "command": "prog"}, 'has "type": \'http\' but no "url"'),
        ({"url": "ftp://h"}, '"url" must start with http:// or https://'),
        ({"url": "http://h", "env": {"A": "b"}}, '"env" applies to stdio servers'),
        ({"command": "prog", "headers": {"A": "b"}}, '"headers" apply to HTTP servers'),
        ({"command": "prog", "args": "--flag"}, '"args" must be a list of strings'),
        ({"command": "prog", "args": [1]}, "args[0] must be a string"),
        ({"command": ["prog"]}, "command must be a string"),
        ({"command": "prog", "env": ["A=b"]}, '"env" must be an object'),
        ({"url": "http://h", "headers": {"A": 5}}, "headers.A must be a string"),
        ({"command": "prog", "apps": "no"}, '"apps" must be true or false'),
    ],
)
def test_entry_errors(tmp_path: Path, entry: Any, expected: str) -> None:
    write(tmp_path, {"bad": entry})
    with pytest.raises(ConfigError) as caught:
        load_server("bad", environ={"MTJ_CONFIG": str(tmp_path)}, cwd=tmp_path)
    assert expected in str(caught.value) and "'bad'" in str(caught.value)


def test_file_errors_and_unknown_names(tmp_path: Path) -> None:
    environ = {"MTJ_CONFIG": str(tmp_path / "user")}
    write(tmp_path / "user", {"known": {"command": "prog"}, "other": {"url": "http://h"}})
    with pytest.raises(ConfigError) as caught:
        load_server("unknown", environ=environ, cwd=tmp_path)
    assert "no server named 'unknown'" in str(caught.value)
    assert "servers defined: known, other" in str(caught.value)
    assert "%mcp_connect unknown URL_OR_COMMAND" in str(caught.value)
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"x": }')
    with pytest.raises(ConfigError, match=r"mcp.json is not valid JSON: .* at line 1, column"):
        load_server("known", environ=environ, cwd=tmp_path)
    (tmp_path / "mcp.json").write_text('["a list"]')
    with pytest.raises(ConfigError, match="must hold a JSON object"):
        load_server("known", environ=environ, cwd=tmp_path)
    (tmp_path / "mcp.json").write_text('{"mcpServers": []}')
    with pytest.raises(ConfigError, match="must be an object of name -> server"):
        load_server("known", environ=environ, cwd=tmp_path)


def test_vs_code_and_jupyter_ai_files_are_read_in_order(tmp_path: Path) -> None:
    """mcp.json, then .vscode/mcp.json, then Jupyter AI's .jupyter/mcp/config.json in each folder; then
    the user's files: mcp.json, Jupyter AI's mcp/config.json, the MCP manager's mcp_servers.json."""
    from mcp_tasks_jupyter.jupyter.config_sources import config_table, sources

    project, user = tmp_path / "project", tmp_path / "user"
    write(project, {"both": {"url": "http://mcp-json/both"}})
    (project / ".vscode").mkdir(parents=True)
    (project / ".vscode" / "mcp.json").write_text(
        json.dumps(
            {
                "inputs": [{"id": "tok", "type": "promptString", "password": True}],
                "servers": {
                    "both": {"type": "http", "url": "http://vscode/both"},
                    "local": {"type": "stdio", "command": "python", "args": ["${workspaceFolder}/srv.py"]},
                    "prompted": {"type": "http", "url": "http://h", "headers": {"Authorization": "${input:tok}"}},
                },
            }
        )
    )
    (project / ".jupyter" / "mcp").mkdir(parents=True)
    (project / ".jupyter" / "mcp" / "config.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ai": {"url": "http://ai/mcp", "transport": "streamable_http"},
                    "off": {"command": "prog", "args": [], "disabled": True},
                    "old": {"url": "http://ai/sse", "transport": "sse"},
                }
            }
        )
    )
    (user / "mcp").mkdir(parents=True)
    (user / "mcp" / "config.json").write_text(json.dumps({"mcpServers": {"off": {"url": "http://user-ai/off"}}}))
    (user / "mcp_servers.json").write_text(
        json.dumps(
            {
                "mcp_servers": [
                    {
                        "name": "managed",
                        "type": "http",
                        "url": "http://managed/mcp",
                        "headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}],
                    },
                    {"name": "tool", "type": "stdio", "command": "srv", "env": [{"name": "K", "value": SECRET}]},
                ]
            }
        )
    )
    environ = {"MTJ_CONFIG": str(user)}
    assert [(s.path.relative_to(tmp_path).as_posix(), s.kind) for s in sources(environ, project)] == [
        ("project/mcp.json", "mcp.json"),
        ("project/.vscode/mcp.json", "VS Code"),
        ("project/.jupyter/mcp/config.json", "Jupyter AI"),
        ("user/mcp.json", "mcp.json"),
        ("user/mcp/config.json", "Jupyter AI"),
        ("user/mcp_servers.json", "Jupyter AI MCP manager"),
    ]
    get = lambda name: load_server(name, environ=environ, cwd=project)  # noqa: E731
    assert get("both").target == "http://mcp-json/both"  # mcp.json first
    assert (
        get("local").target == ["python", f"{project}/srv.py"]
        and get("local").source == project / ".vscode" / "mcp.json"
    )
    assert get("ai").target == "http://ai/mcp" and get("ai").transport == "http"
    assert get("off").target == "http://user-ai/off"  # disabled in the project: the user's entry is used
    managed = get("managed")
    assert managed.headers == {"Authorization": f"Bearer {SECRET}"} and SECRET not in repr(managed)
    assert get("tool").env == {"K": SECRET} and get("tool").target == ["srv"]
    with pytest.raises(ConfigError, match=r"uses \$\{input:tok\}, a VS Code prompt; use \$\{env:VAR\}"):
        get("prompted")
    with pytest.raises(ConfigError, match="unsupported \"type\": 'sse'"):
        get("old")

    table = config_table(environ, project)
    rows = {(row[0], row[2]): row for row in table.rows}
    assert rows[("both", "mcp.json")][5] == "used"
    assert rows[("both", "VS Code")][5] == "shadowed (an earlier file defines it)"
    assert [(r[1], r[5]) for r in table.rows if r[0] == "off"] == [
        (str(project / ".jupyter" / "mcp" / "config.json"), "disabled"),
        (str(user / "mcp" / "config.json"), "used"),
    ]
    assert (
        rows[("prompted", "VS Code")][5].startswith("error: ")
        and "${input:tok}" in rows[("prompted", "VS Code")][5]
    )
    assert rows[("managed", "Jupyter AI MCP manager")][3:5] == ["http", "http://managed/mcp"]
    assert SECRET not in table.text() and SECRET not in table.html()
    assert "Looked in, in order: " in table.text()


def test_config_table_without_any_file(tmp_path: Path) -> None:
    from mcp_tasks_jupyter.jupyter.config_sources import config_table

    table = config_table({"MTJ_CONFIG": str(tmp_path)}, tmp_path)
    assert table.rows == [] and "No server is configured" in table.text()
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "mcp.json").write_text("{not json")
    [row] = config_table({"MTJ_CONFIG": str(tmp_path)}, tmp_path).rows
    assert row[2] == "VS Code" and row[5].startswith("unreadable: ") and "is not valid JSON" in row[5]
