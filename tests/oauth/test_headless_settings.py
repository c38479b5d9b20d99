"""The headless grants' settings and keys: checked at once, read when needed, never shown."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from mcp_tasks_jupyter.errors import UsageError
from mcp_tasks_jupyter.oauth.assertions import client_assertion, private_key
from mcp_tasks_jupyter.oauth.settings import OAuth
from mcp_tasks_jupyter.redact import scrub

PEM = ECKey.generate_key("P-256").as_pem(private=True).decode()


def test_each_grant_says_what_it_lacks() -> None:
    with pytest.raises(UsageError, match=r"jwt_bearer.*assertion"):
        OAuth(grant="jwt_bearer")
    with pytest.raises(UsageError, match=r"enterprise.*idp_issuer"):
        OAuth(
            grant="enterprise",
            client_id="c",
            client_secret="a-client-secret-for-tests-1",
            assertion="an-identity-token-for-tests-1",
        )
    with pytest.raises(UsageError, match=r"enterprise.*client_id"):
        OAuth(
            grant="enterprise",
            assertion="an-identity-token-for-tests-1",
            idp_issuer="https://idp.example",
            idp_client_id="i",
        )
    with pytest.raises(UsageError, match="one of client_secret"):
        OAuth(
            grant="client_credentials", client_id="c", client_secret="a-client-secret-for-tests-1", private_key=PEM
        )
    with pytest.raises(UsageError, match="one of assertion"):
        OAuth(grant="jwt_bearer", assertion="an-identity-token-for-tests-1", assertion_env="TOKEN")
    with pytest.raises(UsageError, match="needs its client_id"):
        OAuth(grant="jwt_bearer", assertion="an-identity-token-for-tests-1", private_key=PEM)
    assert OAuth(grant="client_credentials", client_id="c", private_key=PEM).headless
    assert not OAuth().headless


def test_mcp_json_takes_the_new_settings_and_never_shows_their_secrets() -> None:
    assertion = "eyJ.workload-token-from-env.0123456789"
    settings = OAuth.from_config(
        {
            "grant": "enterprise",
            "client_id": "app",
            "private_key": PEM,
            "assertion": assertion,
            "idp_issuer": "https://idp.example",
            "idp_client_id": "idp-app",
            "idp_client_secret": "idp-secret-0123456789",
            "dpop": True,
        },
        "mcp.json: remote",
    )
    shown = repr(settings)
    for secret in (assertion, "idp-secret-0123456789", PEM.splitlines()[1]):
        assert secret not in shown
        assert secret not in scrub(f"the server echoed {secret}")
    with pytest.raises(UsageError, match="unknown"):
        OAuth.from_config({"grant": "jwt_bearer", "assertion_path": "x"}, "mcp.json: remote")


def test_the_identity_token_is_read_afresh_from_its_file_or_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "token"
    token.write_text("first-workload-token-0123456789\n")
    settings = OAuth(grant="jwt_bearer", assertion_file=token)
    assert settings.identity_assertion() == "first-workload-token-0123456789"
    token.write_text("rotated-workload-token-0123456789\n")  # the CI platform rotated it
    assert settings.identity_assertion() == "rotated-workload-token-0123456789"
    assert "rotated-workload-token" not in scrub("rotated-workload-token-0123456789")

    settings = OAuth(grant="jwt_bearer", assertion_env="MTJ_TEST_WORKLOAD_TOKEN")
    with pytest.raises(UsageError, match="MTJ_TEST_WORKLOAD_TOKEN is not set"):
        settings.identity_assertion()
    monkeypatch.setenv("MTJ_TEST_WORKLOAD_TOKEN", "env-workload-token-0123456789")
    assert settings.identity_assertion() == "env-workload-token-0123456789"

    tokens = iter(["called-token-0123456789-a", "called-token-0123456789-b"])
    settings = OAuth(grant="jwt_bearer", assertion=lambda: next(tokens))
    assert settings.identity_assertion() != settings.identity_assertion()


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_private_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "client.pem"
    path.write_text(PEM)
    path.chmod(0o644)
    with pytest.raises(UsageError, match=r"can be read by others \(mode -rw-r--r--\).*chmod 600"):
        private_key(None, path, None)
    path.chmod(0o600)
    key = private_key(None, path, None)
    assert key.algorithm == "ES256"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_client_assertion_names_the_client_and_the_authorization_server() -> None:
    key = private_key(PEM, None, None)
    first = client_assertion(key, "svc", "https://as.example")
    second = client_assertion(key, "svc", "https://as.example")
    public = ECKey.import_key(PEM).as_dict(private=False)
    claims = jwt.decode(first, ECKey.import_key(public)).claims
    assert claims["iss"] == claims["sub"] == "svc"
    assert claims["aud"] == "https://as.example"
    assert 0 < claims["exp"] - claims["iat"] <= 300
    assert claims["jti"] != jwt.decode(second, ECKey.import_key(public)).claims["jti"]
    assert first not in scrub(first)  # an assertion is a credential: never shown


def test_rsa_and_jwk_keys_and_unreadable_ones() -> None:
    rsa = RSAKey.generate_key(2048)
    assert private_key(rsa.as_pem(private=True).decode(), None, None).algorithm == "RS256"
    import json

    jwk_text = json.dumps(dict(ECKey.generate_key("P-256").as_dict(private=True)))
    assert private_key(jwk_text, None, "ES256").algorithm == "ES256"
    with pytest.raises(UsageError, match="cannot be read"):
        private_key("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----", None, None)
    with pytest.raises(UsageError, match="public key"):
        private_key(json.dumps(dict(ECKey.generate_key("P-256").as_dict(private=False))), None, None)
