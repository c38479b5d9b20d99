"""The ``WWW-Authenticate`` header (RFC 9110 §11.6.1; Bearer parameters from RFC 6750 and RFC 9728). No I/O.

    WWW-Authenticate = 1#challenge
    challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    auth-param       = token BWS "=" BWS ( token / quoted-string )

Commas separate both challenges and their parameters: a token followed by ``=`` is a parameter of the
challenge before it, any other token starts a new challenge. The header comes from the server, so
the parser takes whatever it is given: it never raises, skips what it cannot read, and keeps the
first of repeated parameters (names compared case-insensitively).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*(?=[ \t]*(?:,|$))")
_SPACE = " \t"


@dataclass(slots=True)
class Challenge:
    """One challenge: its scheme (as sent; compare with ``is_bearer``), parameters (lower-case names)
    and the token68 form some schemes use instead of parameters."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def is_bearer(self) -> bool:
        return self.scheme.lower() == "bearer"

    @property
    def realm(self) -> str | None:
        return self.params.get("realm")

    @property
    def scope(self) -> str | None:
        """The scope the resource needs (space-separated scope names), when the server says."""
        return self.params.get("scope")

    @property
    def error(self) -> str | None:
        """``invalid_request``, ``invalid_token``, ``insufficient_scope`` (RFC 6750 §3.1), or another."""
        return self.params.get("error")

    @property
    def error_description(self) -> str | None:
        return self.params.get("error_description")

    @property
    def resource_metadata(self) -> str | None:
        """The URL of the server's OAuth protected resource metadata (RFC 9728 §5.1)."""
        return self.params.get("resource_metadata")


def parse_www_authenticate(header: str) -> list[Challenge]:
    """Every challenge in ``header`` (several ``WWW-Authenticate`` headers joined with ", "), in order."""
    challenges: list[Challenge] = []
    current: Challenge | None = None
    i, n = 0, len(header)
    while i < n:
        char = header[i]
        if char in _SPACE or char == ",":
            i += 1
            continue
        if char == '"':  # a quoted string where none belongs: skip it whole
            _, i = _quoted(header, i)
            continue
        token = _TOKEN.match(header, i)
        if token is None:
            i += 1  # garbage
            continue
        name, j = token.group(), _skip_space(header, token.end())
        if current is not None and j < n and header[j] == "=":
            value, i = _value(header, _skip_space(header, j + 1))
            current.params.setdefault(name.lower(), value)
            continue
        current = Challenge(name)
        challenges.append(current)
        i = j
        token68 = _TOKEN68.match(header, i) if j > token.end() else None
        if token68 is not None:
            current.token68 = token68.group()
            i = token68.end()
    return challenges


def bearer_challenge(challenges: list[Challenge]) -> Challenge | None:
    """The Bearer challenge if there is one, else the first, else None."""
    return next((c for c in challenges if c.is_bearer), challenges[0] if challenges else None)


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _value(text: str, i: int) -> tuple[str, int]:
    if i < len(text) and text[i] == '"':
        return _quoted(text, i)
    token = _TOKEN.match(text, i)
    return (token.group(), token.end()) if token else ("", i)


def _quoted(text: str, i: int) -> tuple[str, int]:
    """The quoted string starting at ``text[i] == '"'`` (unescaped) and the index after it; an
    unterminated one runs to the end."""
    out: list[str] = []
    i += 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return "".join(out), i + 1
        if char == "\\" and i + 1 < len(text):
            i += 1
            char = text[i]
        out.append(char)
        i += 1
    return "".join(out), i
