"""DPoP (RFC 9449): tokens bound to a key this client keeps, and a fresh proof on every request.

One key per server, made on first use and kept with its sign-in in the token store (0600); the key
object is loaded once per connection. A proof is a JWT signed with it (joserfc): ``typ``
``dpop+jwt``, the public key in ``jwk``, and claims ``htm`` (the method), ``htu`` (the URL without
query or fragment), ``iat``, a fresh ``jti``, ``ath`` (the hash of the access token, computed once per
token) on requests to the server, and the server's ``nonce`` once it asked for one (``DPoP-Nonce``).

Signing is the one cost per request (the RFC wants a proof per request); everything else (the header
with the public key, the token's hash, the URL's ``htu``) is computed once.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any

from joserfc import jwk

from ..errors import SignInFailed
from ..redact import register
from .assertions import SigningKey

#: The algorithms this client signs proofs with, in order of preference.
ALGORITHMS = ("ES256", "RS256")
#: The token type of a DPoP-bound token, and the Authorization scheme it is sent with.
SCHEME = "DPoP"
#: The error a server answers when it wants a nonce in the proof (RFC 9449 sections 8 and 9).
USE_NONCE = "use_dpop_nonce"
MAX_NONCE_CHARS = 1024


def choose_algorithm(offered: list[str] | None, required: bool, server: str) -> str | None:
    """The proof algorithm for an authorization server offering ``offered`` (its
    ``dpop_signing_alg_values_supported``; None: it does not say it supports DPoP): None for no DPoP."""
    if offered is None:
        return ALGORITHMS[0] if required else None
    for algorithm in ALGORITHMS:
        if algorithm in offered:
            return algorithm
    if required:
        raise SignInFailed(
            f"the authorization server signs DPoP proofs with {', '.join(offered) or 'nothing'}; this client "
            f"can sign with {', '.join(ALGORITHMS)} (or connect with OAuth(dpop=False))",
            server=server,
        )
    return None


def new_key(algorithm: str) -> dict[str, Any]:
    """A new private key for ``algorithm``, as the JWK the token store keeps."""
    key: jwk.ECKey | jwk.RSAKey
    key = jwk.ECKey.generate_key("P-256") if algorithm == "ES256" else jwk.RSAKey.generate_key(2048)
    data = dict(key.as_dict(private=True))
    data["alg"] = algorithm
    return data


def htu(url: str) -> str:
    """The ``htu`` of a request to ``url``: without its query and fragment (RFC 9449 section 4.2)."""
    return url.split("#", 1)[0].split("?", 1)[0]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class DPoPKey:
    """One server's proof key (loaded once), and the nonces its servers asked for."""

    def __init__(self, jwk_data: dict[str, Any]) -> None:
        algorithm = str(jwk_data.get("alg") or "ES256")
        fields = {k: v for k, v in jwk_data.items() if k != "alg"}
        key = jwk.ECKey.import_key(fields) if algorithm.startswith("ES") else jwk.RSAKey.import_key(fields)
        d = jwk_data.get("d")
        register(d if isinstance(d, str) else None)
        self.jwk = jwk_data
        self.algorithm = algorithm
        self._signer = SigningKey(key, algorithm)
        self._header: dict[str, object] = {"typ": "dpop+jwt", "jwk": dict(key.as_dict(private=False))}
        self.thumbprint = key.thumbprint()
        #: The nonce each endpoint (the token endpoint, the MCP server) last gave, by ``htu``.
        self.nonces: dict[str, str] = {}
        self._ath: tuple[str, str] | None = None
        self._htu: tuple[str, str] | None = None

    def proof(self, method: str, url: str, access_token: str | None = None, nonce: str | None = None) -> str:
        """A fresh proof for one request (``access_token``: the token it carries, hashed into ``ath``;
        ``nonce``: the server's, else the one its endpoint gave before, if any)."""
        if self._htu is None or self._htu[0] != url:
            target = htu(url)
            self._htu = (url, target)
        target = self._htu[1]
        claims: dict[str, object] = {
            "htm": method,
            "htu": target,
            "iat": int(time.time()),
            "jti": secrets.token_urlsafe(16),
        }
        if access_token is not None:
            claims["ath"] = self._token_hash(access_token)
        nonce = nonce or self.nonces.get(target)
        if nonce is not None:
            claims["nonce"] = nonce
        return self._signer.sign(self._header, claims)

    def note_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep the nonce a server at ``url`` gave; True when it is new."""
        if not nonce or len(nonce) > MAX_NONCE_CHARS or not nonce.isascii() or not nonce.isprintable():
            return False
        target = htu(url)
        if self.nonces.get(target) == nonce:
            return False
        self.nonces[target] = nonce
        return True

    def _token_hash(self, access_token: str) -> str:
        if self._ath is None or self._ath[0] != access_token:
            self._ath = (access_token, _b64(hashlib.sha256(access_token.encode("ascii", "replace")).digest()))
        return self._ath[1]
