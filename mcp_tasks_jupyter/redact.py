"""Secrets stay secret: the values a user hands over (header values, env values, URL passwords) are
never shown, whatever shows them (errors, reprs, labels, log records, the task index, widgets).

One process-wide registry: :func:`register` every secret value as it is given (the transports do,
when they are made); :func:`scrub` replaces each registered value in a text with :data:`MARKER`.
Scrubbing happens where text leaves for a person or a file: in every ``MCPError`` (message and the
server's words it keeps), where server text enters a task handle (status and progress messages,
log notifications), in labels (:func:`safe_url` drops URL userinfo), and in every log record of
this package, of the HTTP engine (aiohttp) and of httpx and httpcore (:func:`install_log_scrubbing`).

Registered values are never forgotten: a value once given stays a secret for the life of the process.
With nothing registered a scrub costs one comparison (it runs on the poll path); the set is
compiled into one regular expression each time it changes.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

#: What a secret value becomes wherever it would be shown (the marker ``%mcp_connect`` always used).
MARKER = "***"
#: What an argument with a secret-looking key becomes (in the task index, labels and exports).
REDACTED = "<redacted>"
#: Argument keys whose values are never written (any part of the key, any case).
SECRET_KEY = re.compile(r"token|key|secret|password|passwd|authorization|credential", re.IGNORECASE)
#: Values shorter than this are not registered: they are flags and words (``1``, ``true``, ``debug``,
#: ``en-US``), not credentials, and replacing them everywhere would mangle every message.
MIN_SECRET_LEN = 6
#: Log records of these logger trees are scrubbed: the HTTP engine's (``aiohttp.client``,
#: ``aiohttp.internal``, ...; it may name a URL), and httpx's and httpcore's (``httpx`` logs every
#: request URL at INFO; sign-in's token requests go through it, and users may use httpx).
LOGGER_PREFIXES = ("mcp_tasks_jupyter", "aiohttp", "httpx", "httpcore")
#: Authorization schemes whose credentials are registered on their own too (``Bearer <token>``).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9._~+/-]{0,31})\s+(\S.*)$")

_lock = threading.Lock()
_values: set[str] = set()
#: None while nothing is registered: the fast path of :func:`scrub`.
_pattern: re.Pattern[str] | None = None


# -- the registry ----------------------------------------------------------------------------------


def register(value: str | None) -> None:
    """Treat ``value`` (and its usual transforms) as a secret from now on.

    Besides the value itself: the credentials after an auth scheme (``Bearer <token>`` registers
    ``<token>``; ``Basic`` also its decoded ``user:password`` and password), and the URL-encoded and
    JSON-escaped forms (how a server echoing it may write it). Values shorter than
    :data:`MIN_SECRET_LEN` are ignored.
    """
    if not isinstance(value, str):
        return
    _add(_forms(value))


def register_all(values: Iterable[str] | Mapping[str, str] | None) -> None:
    """Register every value (of a mapping: its values, e.g. headers or env)."""
    if not values:
        return
    items = values.values() if isinstance(values, Mapping) else values
    forms: set[str] = set()
    for value in items:
        if isinstance(value, str):
            forms |= _forms(value)
    _add(forms)


def register_url(url: str | None) -> None:
    """Register the password in a URL's userinfo (the user name when there is no password, as in
    ``https://TOKEN@host``): as written, decoded, and as the ``Basic`` credentials httpx sends."""
    if not isinstance(url, str) or "@" not in url:
        return
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return
    userinfo = parts.netloc.rpartition("@")[0]
    if not userinfo:
        return
    raw_user, colon, raw_password = userinfo.partition(":")
    if not colon:  # ``https://TOKEN@host``: the user name is the credential
        raw_password = raw_user
    user = urllib.parse.unquote(raw_user)
    password = urllib.parse.unquote(raw_password)
    forms = _forms(raw_password) | _forms(password)
    forms |= _forms(base64.b64encode(f"{user}:{password if colon else ''}".encode()).decode())
    _add(forms)


def registered() -> int:
    """How many values (forms included) are registered."""
    return len(_values)


def _forms(value: str) -> set[str]:
    value = value.strip()
    forms = {value}
    match = _SCHEME.match(value)
    if match:
        credentials = match.group(2).strip()
        forms.add(credentials)
        if match.group(1).lower() == "basic":
            forms |= _basic(credentials)
    for form in list(forms):
        forms.add(urllib.parse.quote(form, safe=""))
        forms.add(urllib.parse.quote_plus(form, safe=""))
        forms.add(json.dumps(form)[1:-1])
        forms.add(json.dumps(form, ensure_ascii=False)[1:-1])
    return {f for f in forms if len(f) >= MIN_SECRET_LEN}


def _basic(credentials: str) -> set[str]:
    try:
        decoded = base64.b64decode(credentials, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return set()
    return {decoded, decoded.partition(":")[2]}


def _add(forms: set[str]) -> None:
    global _pattern
    with _lock:
        new = forms - _values
        if not new:
            return
        _values.update(new)
        # Longest first: a value that contains another is replaced whole.
        alternatives = sorted(_values, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(v) for v in alternatives))
    install_log_scrubbing()


# -- scrubbing -------------------------------------------------------------------------------------


def scrub_values(text: str, values: Iterable[str]) -> str:
    """``text`` with each of ``values`` (a server config's own secrets, registered or not) replaced
    by :data:`MARKER`, the longest first."""
    for value in sorted(values, key=len, reverse=True):
        if value:
            text = text.replace(value, MARKER)
    return text


def is_secret_key(key: object) -> bool:
    """Whether an argument named ``key`` holds a secret (any part of it, any case: see :data:`SECRET_KEY`)."""
    return isinstance(key, str) and SECRET_KEY.search(key) is not None


def redact_arguments(value: Any) -> Any:
    """``value`` with the values of secret-looking keys (token, key, password, ...) replaced by
    :data:`REDACTED`, at any depth: what the task index, labels and exports keep of arguments."""
    if isinstance(value, dict):
        return {k: REDACTED if is_secret_key(k) else redact_arguments(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_arguments(v) for v in value]
    return value


def scrub(text: str) -> str:
    """``text`` with every registered secret replaced by :data:`MARKER`."""
    pattern = _pattern
    if pattern is None or not text or not isinstance(text, str):
        return text
    return pattern.sub(MARKER, text)


def scrub_optional(text: str | None) -> str | None:
    """:func:`scrub` that lets None through."""
    return scrub(text) if text else text


def scrub_data(value: Any) -> Any:
    """A JSON-like value with every string in it (keys too) scrubbed; the same object when nothing
    is registered or nothing changed. Nesting too deep to walk becomes the marker."""
    if _pattern is None:
        return value
    try:
        return _scrub_tree(value)
    except RecursionError:
        return MARKER


def _scrub_tree(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        items = [(_scrub_tree(k), _scrub_tree(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        scrubbed = [_scrub_tree(v) for v in value]
        if all(a is b for a, b in zip(scrubbed, value, strict=True)):
            return value
        return type(value)(scrubbed) if isinstance(value, list) else tuple(scrubbed)
    return value


def safe_url(url: str) -> str:
    """``url`` without its userinfo (``http://user:pw@host/mcp`` becomes ``http://host/mcp``), for
    labels; the real URL keeps working for requests. Anything that is not a URL is scrubbed only."""
    if isinstance(url, str) and "@" in url and url.startswith(("http://", "https://")):
        scheme, sep, rest = url.partition("://")
        end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
        authority, path = rest[:end], rest[end:]
        if "@" in authority:
            url = f"{scheme}{sep}{authority.rpartition('@')[2]}{path}"
    return scrub(url)


# -- log records -----------------------------------------------------------------------------------


def scrub_record(record: logging.LogRecord) -> logging.LogRecord:
    """Scrub one log record in place: its message (formatted with its arguments), its formatted
    exception and stack. A record without secrets is left as it was (arguments kept)."""
    if _pattern is None:
        return record
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: logging reports it, with the arguments; show none
        message = f"{record.msg} (arguments not shown)"
        record.msg, record.args = scrub(str(message)), ()
    else:
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, ()
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        text = _formatter.formatException(record.exc_info)
        clean = scrub(text)
        if clean != text:
            record.exc_text = clean  # formatters use exc_text when it is set
    elif record.exc_text:
        record.exc_text = scrub(record.exc_text)
    if record.stack_info:
        record.stack_info = scrub(record.stack_info)
    return record


class SecretFilter(logging.Filter):
    """A logging filter that scrubs every record it sees (never drops one). Records of this package,
    aiohttp, httpx and httpcore are scrubbed already; attach it to a handler to scrub everything it writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        scrub_record(record)
        return True


_formatter = logging.Formatter()
_installed = False


def install_log_scrubbing() -> None:
    """Scrub every log record of the :data:`LOGGER_PREFIXES` trees as it is made (idempotent).

    A filter on a logger runs only for records made by that very logger, not for its children
    (``httpcore.http11``), and httpcore's loggers do not even exist until httpx makes its first
    connection pool; so instead the record factory is wrapped: it sees every record of every logger,
    whenever that logger was created, before any filter or handler does. Other records pass
    untouched (one prefix test, only once a secret is registered).
    """
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _pattern is not None and record.name.startswith(LOGGER_PREFIXES):
            scrub_record(record)
        return record

    logging.setLogRecordFactory(factory)


__all__ = [
    "MARKER",
    "MIN_SECRET_LEN",
    "SecretFilter",
    "install_log_scrubbing",
    "register",
    "register_all",
    "register_url",
    "safe_url",
    "scrub",
    "scrub_data",
    "scrub_optional",
    "scrub_record",
]
