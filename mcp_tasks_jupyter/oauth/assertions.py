"""Signed JWTs this client makes (joserfc, which authlib's own JOSE module now defers to): the
``private_key_jwt`` client assertion (RFC 7523 section 2.2), and the private keys they are signed with.

A key comes as PEM text or a private JWK (``OAuth(private_key=...)``, e.g. from ``${env:...}``) or from
a file (``OAuth(private_key_file=...)``) that only its owner may read: a key file open to the group or
to others is refused, as ssh refuses one. Nothing here shows a key or an assertion: both are
registered as secrets as soon as they exist.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from joserfc import jwk, jwt
from joserfc.errors import JoseError

from ..errors import UsageError
from ..redact import register, register_all

#: The client assertion's type (RFC 7523 section 2.2).
JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: How long a client assertion is good for (it is made for one token request).
ASSERTION_LIFETIME_S = 120
MAX_KEY_BYTES = 64 * 1024
#: The JWS algorithm a key signs with when none is named, by curve.
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}

Key = jwk.ECKey | jwk.RSAKey | jwk.OKPKey
KeyType = Literal["EC", "RSA", "OKP"]


class SigningKey:
    """A private key loaded once, with the algorithm it signs with."""

    def __init__(self, key: Key, algorithm: str) -> None:
        self.key = key
        self.algorithm = algorithm

    def sign(self, header: dict[str, object], claims: dict[str, object]) -> str:
        """The compact JWS of ``claims`` (``alg`` added to ``header``)."""
        return jwt.encode({**header, "alg": self.algorithm}, claims, self.key, algorithms=[self.algorithm])


def private_key(text: str | None, path: str | os.PathLike[str] | None, algorithm: str | None) -> SigningKey:
    """The signing key from PEM or JWK text, or from a file only its owner can read."""
    if path is not None:
        text = _read_key_file(Path(path))
    if not text:
        raise UsageError("OAuth: private_key_jwt needs private_key or private_key_file")
    register_key_text(text)
    try:
        if text.lstrip().startswith("{"):
            key, default = _from_jwk(text)
        else:
            key, default = _from_pem(text)
    except (ValueError, TypeError, JoseError) as exc:
        raise UsageError(
            f"OAuth: the private key cannot be read ({type(exc).__name__}); give a PEM private key or a "
            "private JWK"
        ) from None
    if not key.is_private:
        raise UsageError("OAuth: the key given is a public key; private_key_jwt needs the private key")
    d = key.as_dict(private=True).get("d")
    register(d if isinstance(d, str) else None)
    return SigningKey(key, algorithm or default)


def register_key_text(text: str | None) -> None:
    """Register a key's text as a secret: whole, and each line of a PEM body (a message quoting part
    of it shows no line of it either)."""
    if not text:
        return
    register(text.strip())
    register_all(line.strip() for line in text.splitlines() if not line.startswith("-----"))


def _read_key_file(path: Path) -> str:
    try:
        info = path.stat()
        if info.st_size > MAX_KEY_BYTES:
            raise UsageError(f"OAuth(private_key_file=...): {path} is over 64 KiB: not a private key")
        if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise UsageError(
                f"OAuth(private_key_file=...): {path} can be read by others (mode {stat.filemode(info.st_mode)}): "
                f"not using it; make it private with: chmod 600 {path}"
            )
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise UsageError(f"OAuth(private_key_file=...): cannot read {path}: {why}") from None


def _from_pem(text: str) -> tuple[Key, str]:
    data = text.strip().encode()
    loaded = load_pem_private_key(data, password=None)
    kind: KeyType
    if isinstance(loaded, ec.EllipticCurvePrivateKey):
        kind, default = "EC", _EC_ALGORITHMS.get(loaded.curve.name, "ES256")
    elif isinstance(loaded, rsa.RSAPrivateKey):
        kind, default = "RSA", "RS256"
    elif isinstance(loaded, ed25519.Ed25519PrivateKey):
        kind, default = "OKP", "EdDSA"
    else:
        raise TypeError("unsupported key type")
    return _import(data, kind), default


def _from_jwk(text: str) -> tuple[Key, str]:
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("kty") not in ("EC", "RSA", "OKP"):
        raise ValueError("not an EC, RSA or OKP JWK")
    key = _import(data, data["kty"])
    named = data.get("alg")
    if isinstance(named, str):
        return key, named
    if data["kty"] == "EC":
        return key, {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}.get(str(data.get("crv")), "ES256")
    return key, "RS256" if data["kty"] == "RSA" else "EdDSA"


def _import(data: bytes | dict[str, Any], kind: KeyType) -> Key:
    if kind == "EC":
        return jwk.ECKey.import_key(data)
    if kind == "RSA":
        return jwk.RSAKey.import_key(data)
    return jwk.OKPKey.import_key(data)


def client_assertion(key: SigningKey, client_id: str, audience: str) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523 section 3): this client is ``iss`` and ``sub``,
    the authorization server (its issuer) ``aud``; short-lived, with a fresh ``jti``."""
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_S,
        "jti": secrets.token_urlsafe(16),
    }
    assertion = key.sign({"typ": "JWT"}, claims)
    register(assertion)
    return assertion
