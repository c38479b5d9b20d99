"""``--auth-dpop``: the demo's check of DPoP proofs (RFC 9449 section 4.3), for its token endpoint and
its MCP resource. Signatures are verified by joserfc (a well-kept JOSE library, already a dependency);
this module checks the claims: ``typ`` ``dpop+jwt``, an allowed ``alg``, a public ``jwk`` (no private
members), ``htm`` and ``htu`` (without query and fragment) of the request, ``iat`` within
:data:`IAT_WINDOW` seconds, a ``jti`` not seen before (the last :data:`MAX_JTIS` are kept), ``ath``
(the hash of the access token presented with it) and, with ``--auth-dpop-nonce``, the server's nonce.
A good proof yields its key's RFC 7638 thumbprint (the ``jkt`` a token is bound to).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, RSAKey

#: The proof algorithms the demo accepts (what the client's oauth/dpop.py signs with).
ALGORITHMS = ("ES256", "RS256")
IAT_WINDOW = 60  # seconds a proof's iat may be off the server's clock
MAX_JTIS = 10_000  # proofs remembered against replay
MAX_PROOF_CHARS = 8192
PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
NONCE_TTL = 300.0  # seconds a nonce stays current


@dataclass(frozen=True)
class ProofError:
    """Why a proof was refused: ``use_dpop_nonce`` (answer with a ``DPoP-Nonce``) or ``invalid_dpop_proof``."""

    error: str
    description: str


def token_hash(access_token: str) -> str:
    """``ath``: base64url(sha256(token))."""
    digest = hashlib.sha256(access_token.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class ProofChecker:
    """Checks proofs for one server; ``use_nonce``: proofs must carry its current nonce."""

    def __init__(self, *, use_nonce: bool = False, clock: Callable[[], float] = time.time) -> None:
        self.use_nonce = use_nonce
        self.clock = clock
        self._jtis: OrderedDict[str, None] = OrderedDict()
        self._nonce = secrets.token_urlsafe(16)
        self._nonce_made = clock()

    @property
    def nonce(self) -> str:
        """The current nonce (a new one every :data:`NONCE_TTL` seconds)."""
        if self.clock() - self._nonce_made > NONCE_TTL:
            self._nonce, self._nonce_made = secrets.token_urlsafe(16), self.clock()
        return self._nonce

    def check(self, proof: str | None, method: str, url: str, access_token: str | None = None) -> str | ProofError:
        """The thumbprint of the key that signed ``proof`` for ``method`` ``url`` (carrying
        ``access_token``, if given), or why it is refused."""
        if not proof or len(proof) > MAX_PROOF_CHARS or "," in proof:
            return ProofError("invalid_dpop_proof", "the request needs one DPoP proof")
        try:
            header = jws.extract_compact(proof.encode("ascii")).protected
        except (JoseError, ValueError, UnicodeError):
            return ProofError("invalid_dpop_proof", "the DPoP proof is not a JWS")
        problem = _header_problem(header)
        if problem is not None:
            return ProofError("invalid_dpop_proof", problem)
        try:
            data = header["jwk"]
            key: ECKey | RSAKey = ECKey.import_key(data) if data.get("kty") == "EC" else RSAKey.import_key(data)
            claims = jwt.decode(proof, key, algorithms=[header["alg"]]).claims
        except (JoseError, ValueError, TypeError, KeyError):
            return ProofError("invalid_dpop_proof", "the DPoP proof's signature does not verify with its jwk")
        refused = self._claims_problem(claims, method, url, access_token)
        if refused is not None:
            return refused
        jti = str(claims["jti"])
        if jti in self._jtis:
            return ProofError("invalid_dpop_proof", "the DPoP proof was used before (jti)")
        self._jtis[jti] = None
        while len(self._jtis) > MAX_JTIS:
            self._jtis.popitem(last=False)
        return key.thumbprint()

    def _claims_problem(
        self, claims: dict[str, Any], method: str, url: str, access_token: str | None
    ) -> ProofError | None:
        target = url.split("#", 1)[0].split("?", 1)[0]
        bad = "invalid_dpop_proof"
        if claims.get("htm") != method:
            return ProofError(bad, f"the DPoP proof is for another method (htm), not {method}")
        if claims.get("htu") != target:
            return ProofError(bad, f"the DPoP proof is for another URL (htu), not {target}")
        iat = claims.get("iat")
        if not isinstance(iat, int) or abs(self.clock() - iat) > IAT_WINDOW:
            return ProofError(bad, f"the DPoP proof's iat is missing or more than {IAT_WINDOW} s off")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not 1 <= len(jti) <= 256:
            return ProofError(bad, "the DPoP proof has no jti")
        if access_token is not None and claims.get("ath") != token_hash(access_token):
            return ProofError(bad, "the DPoP proof is for another access token (ath)")
        if self.use_nonce and claims.get("nonce") != self.nonce:
            return ProofError("use_dpop_nonce", "the DPoP proof must carry the server's nonce")
        return None


def _header_problem(header: dict[str, Any]) -> str | None:
    if header.get("typ") != "dpop+jwt":
        return "the DPoP proof's typ is not dpop+jwt"
    if header.get("alg") not in ALGORITHMS:
        return f"the DPoP proof's alg must be one of {', '.join(ALGORITHMS)}"
    key = header.get("jwk")
    if not isinstance(key, dict) or key.get("kty") not in ("EC", "RSA"):
        return "the DPoP proof has no public jwk"
    if PRIVATE_MEMBERS & set(key):
        return "the DPoP proof's jwk carries a private key"
    return None
