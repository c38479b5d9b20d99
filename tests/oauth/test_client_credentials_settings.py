"""The headless grant's settings: checked at once, and the secret never shown."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcp_tasks_jupyter.errors import UsageError
from mcp_tasks_jupyter.oauth.settings import OAuth
from mcp_tasks_jupyter.redact import scrub, scrub_record

SECRET = "cc-secret-from-env-0123456789abcdef"


def test_client_credentials_needs_an_id_and_a_secret() -> None:
    with pytest.raises(UsageError, match="client_credentials"):
        OAuth(grant="client_credentials", client_id="svc")
    with pytest.raises(UsageError, match="grant"):
        OAuth(grant="password")


def test_a_secret_from_env_never_reaches_repr_errors_or_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MTJ_TEST_CC_SECRET", SECRET)
    import os

    settings = OAuth.from_config(
        {"grant": "client_credentials", "client_id": "svc", "client_secret": os.environ["MTJ_TEST_CC_SECRET"]},
        "mcp.json: demo",
    )
    assert SECRET not in repr(settings)
    assert SECRET not in scrub(f"the token endpoint echoed {SECRET}")
    record = logging.LogRecord("mcp_tasks_jupyter.oauth", logging.INFO, __file__, 1, "answer: %s", (SECRET,), None)
    assert SECRET not in scrub_record(record).getMessage()


def test_a_secret_file_is_read_when_needed(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text("first-secret-value-0123456789\n")
    settings = OAuth(grant="client_credentials", client_id="svc", client_secret_file=path)
    assert settings.secret() == "first-secret-value-0123456789"
    path.write_text("rotated-secret-value-0123456789\n")
    assert settings.secret() == "rotated-secret-value-0123456789"
    assert "rotated" not in repr(settings)
