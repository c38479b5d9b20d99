"""The parameterised example notebook run by papermill against the OAuth-protected demo server (issue 21,
item 5): with the ``oauth`` parameter naming the client credentials grant and a secret file, the study runs
with nobody to sign in, and neither the secret nor a token reaches the saved notebook or the provenance."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import papermill
import pytest

from tests.support import REPO_ROOT
from tests.support.auth_demo import start_auth_demo

NOTEBOOK = REPO_ROOT / "notebooks" / "09-papermill.ipynb"
CLIENT_ID = "study-ci"
SECRET = "demo-client-secret-for-papermill-0123456789"


@pytest.mark.timeout(240)
def test_the_study_runs_headless_on_a_protected_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))  # the kernel imports this checkout
    monkeypatch.setenv("MTJ_TOKENS", str(tmp_path / "tokens"))  # the kernel's token store
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    secret_file.chmod(0o600)
    out, provenance = tmp_path / "out.ipynb", tmp_path / "provenance.jsonl"
    with start_auth_demo(client_id=CLIENT_ID, client_secret=SECRET, scopes="mcp:tools") as demo:
        papermill.execute_notebook(
            str(NOTEBOOK),
            str(out),
            parameters={
                "topics": ["moons"],
                "server": demo.url,
                "cache": False,
                "provenance": str(provenance),
                "oauth": {
                    "grant": "client_credentials",
                    "client_id": CLIENT_ID,
                    "client_secret_file": str(secret_file),
                },
            },
            kernel_name="python3",
            cwd=str(tmp_path),
            progress_bar=False,
            execution_timeout=120,
        )
        server_said = demo.output()
    [row] = [json.loads(line) for line in provenance.read_text().splitlines()]
    assert row["status"] == "completed" and row["arguments"]["topic"] == "moons"
    stored = (tmp_path / "tokens").glob("*.json")
    kept = [json.loads(path.read_text())["tokens"]["access_token"] for path in stored]
    saved = out.read_text() + provenance.read_text()
    for secret in (SECRET, *kept):
        assert secret not in saved
    assert kept, f"no tokens kept under {tmp_path / 'tokens'}: the server was not signed in to"
    assert SECRET not in server_said
    assert "authorize" not in "".join(
        o.get("text", "") for cell in nbformat.read(out, as_version=4).cells for o in cell.get("outputs", [])
    )  # nobody was sent to a sign-in page
