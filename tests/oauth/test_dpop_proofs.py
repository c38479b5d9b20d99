"""DPoP proofs (RFC 9449): what each one carries, that each is fresh, and that the key stays private."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import time
from pathlib import Path

import pytest
from joserfc import jws, jwt
from joserfc.jwk import ECKey

from mcp_tasks_jupyter.errors import SignInFailed
from mcp_tasks_jupyter.oauth.dpop import DPoPKey, choose_algorithm, new_key
from mcp_tasks_jupyter.oauth.store import SignIn, Tokens, TokenStore
from mcp_tasks_jupyter.redact import scrub


def opened(proof: str) -> tuple[dict, dict]:
    """The proof's header and claims, its signature checked with the key in its own header."""
    header = jws.extract_compact(proof.encode()).protected
    token = jwt.decode(proof, ECKey.import_key(header["jwk"]))
    return header, token.claims


def test_a_proof_carries_method_url_time_a_fresh_id_and_the_token_hash() -> None:
    key = DPoPKey(new_key("ES256"))
    proof = key.proof("POST", "https://mcp.example/mcp?session=1#x", "an-access-token-0123456789")
    header, claims = opened(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert "d" not in header["jwk"]  # the public key only
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://mcp.example/mcp"  # no query, no fragment
    assert abs(claims["iat"] - time.time()) < 60
    digest = hashlib.sha256(b"an-access-token-0123456789").digest()
    assert claims["ath"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert "nonce" not in claims
    again = opened(key.proof("POST", "https://mcp.example/mcp", "an-access-token-0123456789"))[1]
    assert again["jti"] != claims["jti"]
    assert header["jwk"] == opened(key.proof("GET", "https://mcp.example/mcp"))[0]["jwk"]


def test_nonces_are_kept_per_endpoint_and_a_given_one_wins() -> None:
    key = DPoPKey(new_key("ES256"))
    assert key.note_nonce("https://as.example/token", "as-nonce-1") is True
    assert key.note_nonce("https://as.example/token?x=1", "as-nonce-1") is False  # the same one again
    assert key.note_nonce("https://as.example/token", "bad\nnonce") is False
    assert opened(key.proof("POST", "https://as.example/token"))[1]["nonce"] == "as-nonce-1"
    assert "nonce" not in opened(key.proof("POST", "https://mcp.example/mcp"))[1]
    assert (
        opened(key.proof("POST", "https://mcp.example/mcp", "a-bound-token-for-tests-1", "rs-nonce"))[1]["nonce"]
        == "rs-nonce"
    )


def test_the_algorithm_follows_the_authorization_server() -> None:
    assert choose_algorithm(None, False, "s") is None  # it does not offer DPoP: bearer tokens
    assert choose_algorithm(None, True, "s") == "ES256"  # OAuth(dpop=True): proofs anyway
    assert choose_algorithm(["PS256", "RS256"], False, "s") == "RS256"
    assert choose_algorithm(["EdDSA"], False, "s") is None
    with pytest.raises(SignInFailed, match="EdDSA"):
        choose_algorithm(["EdDSA"], True, "s")
    rsa = DPoPKey(new_key("RS256"))
    segment = rsa.proof("POST", "https://as.example/token").split(".")[0]
    header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    assert header["alg"] == "RS256" and "d" not in header["jwk"]


def test_the_key_is_kept_with_the_sign_in_owner_only_and_never_shown(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    private = new_key("ES256")
    record = SignIn("https://mcp.example/mcp", tokens=Tokens("bound-token-0123456789", token_type="DPoP"))
    record.dpop_key = private
    store.save(record)
    path = store.path_for(record.resource)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    loaded = store.load(record.resource)
    assert loaded is not None and loaded.dpop_key == private
    assert DPoPKey(loaded.dpop_key).thumbprint == DPoPKey(private).thumbprint
    assert private["d"] not in scrub(json.dumps(loaded.dpop_key))
