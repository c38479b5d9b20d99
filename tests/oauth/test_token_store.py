"""The token store: one file per server, owner-only, written whole; nothing else is trusted."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from mcp_tasks_jupyter.oauth.store import ClientRegistration, SignIn, Tokens, TokenStore, jupyter_data_dir
from mcp_tasks_jupyter.redact import scrub


def sign_in(resource: str = "https://api.example.com/mcp") -> SignIn:
    return SignIn(
        resource,
        indicator=resource,
        client=ClientRegistration(
            "https://auth.example.com", "client-1", "a-client-secret-1", "client_secret_basic"
        ),
        tokens=Tokens("an-access-token-123", refresh_token="a-refresh-token-456", expires_at=2e9, scope="mcp"),
        scopes=["mcp"],
    )


def test_round_trip_with_owner_only_permissions(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "oauth")
    store.save(sign_in())
    path = store.path_for("https://api.example.com/mcp")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind
    assert store.load("https://api.example.com/mcp") == sign_in()
    assert store.load("https://other.example.com/mcp") is None


def test_loaded_secrets_are_scrubbed_everywhere(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save(sign_in())
    assert "an-access-token-123" not in scrub("token an-access-token-123 and a-refresh-token-456")
    assert "a-refresh-token-456" not in scrub("a-refresh-token-456")


def test_a_file_naming_another_resource_or_garbage_is_ignored(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    path = store.path_for("https://api.example.com/mcp")
    path.write_text(json.dumps({"resource": "https://elsewhere.example.com/mcp"}))
    assert store.load("https://api.example.com/mcp") is None
    path.write_text("not json")
    assert store.load("https://api.example.com/mcp") is None


def test_delete(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save(sign_in())
    assert store.delete("https://api.example.com/mcp") is True
    assert store.delete("https://api.example.com/mcp") is False


def test_default_directory_is_the_jupyter_data_directory(tmp_path: Path) -> None:
    assert jupyter_data_dir({"JUPYTER_DATA_DIR": str(tmp_path)}) == tmp_path
    assert jupyter_data_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "jupyter"
