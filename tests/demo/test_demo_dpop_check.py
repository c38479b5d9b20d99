"""The demo's DPoP proof check (``--auth-dpop``), on proofs made by hand: what a forger could change in a
proof (its type, a private key in its header, an old ``iat``, a replayed ``jti``) is refused, and the
replay memory stays bounded."""

from __future__ import annotations

import time
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey

from mcp_tasks_jupyter.demo import dpop_check
from mcp_tasks_jupyter.demo.dpop_check import ProofChecker, ProofError

URL = "http://127.0.0.1:8000/token"


def proof(key: ECKey, *, private: bool = False, typ: str = "dpop+jwt", **claims: Any) -> str:
    header = {"alg": "ES256", "typ": typ, "jwk": dict(key.as_dict(private=private))}
    body = {"htm": "POST", "htu": URL, "iat": int(time.time()), "jti": ECKey.generate_key("P-256").thumbprint()}
    return jwt.encode(header, {**body, **claims}, key)


def refused(answer: str | ProofError, words: str) -> None:
    assert isinstance(answer, ProofError) and answer.error == "invalid_dpop_proof", answer
    assert words in answer.description, answer.description


def test_a_good_proof_gives_its_keys_thumbprint_once() -> None:
    key, checker = ECKey.generate_key("P-256"), ProofChecker()
    good = proof(key)
    assert checker.check(good, "POST", URL + "?a=1#f") == key.thumbprint()
    refused(checker.check(good, "POST", URL), "used before")


def test_what_a_forger_could_change_is_refused() -> None:
    key, checker = ECKey.generate_key("P-256"), ProofChecker()
    refused(checker.check(proof(key, private=True), "POST", URL), "private key")
    refused(checker.check(proof(key, typ="JWT"), "POST", URL), "typ")
    refused(checker.check(proof(key, iat=int(time.time()) - 3600), "POST", URL), "iat")
    refused(checker.check(proof(key, iat="now"), "POST", URL), "iat")
    refused(checker.check(proof(key), "POST", URL, "a-token"), "ath")
    refused(checker.check(proof(key), "GET", URL), "method")
    tampered = proof(key).rsplit(".", 1)[0] + "." + proof(ECKey.generate_key("P-256")).rsplit(".", 1)[1]
    refused(checker.check(tampered, "POST", URL), "signature")
    refused(checker.check("not.a.jws", "POST", URL), "not a JWS")
    refused(checker.check(None, "POST", URL), "needs one DPoP proof")


def test_the_replay_memory_is_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(dpop_check, "MAX_JTIS", 3)
    key, checker = ECKey.generate_key("P-256"), ProofChecker()
    first = proof(key)
    for made in [first, *(proof(key) for _ in range(3))]:
        assert isinstance(checker.check(made, "POST", URL), str)
    assert isinstance(checker.check(first, "POST", URL), str)  # forgotten (its iat still bounds a replay)
