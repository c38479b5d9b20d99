"""Our client (tests/conformance/client.py) against the official conformance suite's client scenarios.

Each scenario starts a scripted server, runs the client with its URL as the last argument, and
writes checks.json; a scenario passes when the runner exits 0 and no check is a FAILURE or a
WARNING (the runner fails on both). SCENARIOS.md says what each scenario expects of the client.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.peers

# The stateful wire (initialize handshake, sessions, SSE streams).
SCENARIOS_2025_11_25 = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "json-schema-2020-12-preservation",
]

# The stateless wire (per-request _meta, no initialize), where the tasks extension lives.
SCENARIOS_2026_07_28 = [
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
]

# Authorization (OAuth), in every version they apply to; the [extension] ones are left out (optional).
AUTH_BOTH = [
    "metadata-default",
    "metadata-var1",
    "metadata-var2",
    "metadata-var3",
    "basic-cimd",
    "scope-from-www-authenticate",
    "scope-from-scopes-supported",
    "scope-omitted-when-undefined",
    "scope-step-up",
    "scope-retry-limit",
    "token-endpoint-auth-basic",
    "token-endpoint-auth-post",
    "token-endpoint-auth-none",
    "pre-registration",
]
AUTH_2025_03_26 = ["2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback"]
AUTH_2026_07_28 = [
    "resource-mismatch",
    "offline-access-scope",
    "offline-access-not-supported",
    "authorization-server-migration",
    "iss-supported",
    "iss-not-advertised",
    "iss-supported-missing",
    "iss-wrong-issuer",
    "iss-unexpected",
    "iss-normalized",
    "metadata-issuer-mismatch",
]
AUTH_CASES = (
    [(f"auth/{s}", v) for s in AUTH_BOTH for v in ("2025-11-25", "2026-07-28")]
    + [(f"auth/{s}", "2025-03-26") for s in AUTH_2025_03_26]
    + [(f"auth/{s}", "2026-07-28") for s in AUTH_2026_07_28]
)

#: The [extension] scenarios (`conformance list`); they run at the runner's default version ("default").
AUTH_EXTENSIONS = [
    "client-credentials-basic",
    "client-credentials-jwt",
    "wif-jwt-bearer",
    "enterprise-managed-authorization",
    "dpop",
    "dpop-nonce",
]

CASES = (
    [pytest.param(s, "2025-11-25", id=f"2025-11-25-{s}") for s in SCENARIOS_2025_11_25]
    + [pytest.param(s, "2026-07-28", id=f"2026-07-28-{s}") for s in SCENARIOS_2026_07_28]
    + [pytest.param(s, v, id=f"{v}-{s}") for s, v in AUTH_CASES]
    + [pytest.param(f"auth/{s}", "default", id=f"extension-auth/{s}") for s in AUTH_EXTENSIONS]
)


def test_every_auth_scenario_is_run() -> None:
    assert len(AUTH_CASES) == 41  # AUTH.md: 41 scenario runs without the extensions


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("scenario", "spec_version"), CASES)
def test_client_scenario(scenario: str, spec_version: str, tmp_path: Path, conformance_suite) -> None:
    run = conformance_suite(scenario, spec_version, tmp_path, timeout=90)
    passed = run.returncode == 0 and bool(run.checks) and not run.bad_checks
    if not passed:  # no checks at all: the runner skipped the scenario or never got going
        pytest.fail(run.report(), pytrace=False)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("token", ["expired_jwt", "wrong_audience_jwt"])
def test_a_refused_workload_token_fails_at_once_naming_the_grant(
    token: str, tmp_path: Path, conformance_suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite's authorization server refuses these tokens; a headless client must neither retry
    # nor switch grants (a WARNING then), and must say which grant failed and why, without the token.
    monkeypatch.setenv("MTJ_CONFORMANCE_WIF_TOKEN", token)
    run = conformance_suite("auth/wif-jwt-bearer", "default", tmp_path, timeout=90)
    seen = {check["id"]: check["status"] for check in run.checks}
    assert run.returncode != 0
    assert "wif-no-retry" not in seen and "wif-grant-fallback" not in seen, run.report()
    assert seen.get("wif-assertion-expired" if token == "expired_jwt" else "wif-assertion-audience") == "FAILURE"
    said = run.client_output()
    assert "the jwt_bearer grant was refused" in said and "invalid_grant" in said, said
    assert "eyJ" not in said  # no token (a JWT) in what the client printed
