"""Where a task index lives: a path is a SQLite file, a ``postgresql://`` (or ``postgres://``) URL a team's
PostgreSQL database; any other URL is a UsageError naming its scheme (never a file named after it, which
would also keep a password in a path).

The URL is libpq's (``postgresql://user:password@host:port/database?sslmode=require``); a password in it
is registered as a secret at once (``redact.py``), and :attr:`IndexLocation.shown` is the URL without it
(``postgresql://user@host:port/database``): what every message, repr and widget names.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..redact import register_url, scrub

#: ``scheme://`` at the start of an index location: a URL, never a file name.
URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
POSTGRES_SCHEMES = ("postgresql", "postgres")


@dataclass(frozen=True)
class IndexLocation:
    """A parsed index location: ``kind`` is ``sqlite`` (``path``) or ``postgresql`` (``url``, secret)."""

    kind: str
    #: What may be shown: the file's path, or the URL without its password.
    shown: str
    path: Path | None = None
    url: str | None = field(default=None, repr=False)
    #: For PostgreSQL: the host and database the URL names (for errors).
    host: str | None = None
    database: str | None = None

    def __str__(self) -> str:
        return self.shown


def parse_location(location: str | os.PathLike[str]) -> IndexLocation:
    """The index a location names (see the module docstring). Raises UsageError for a URL of another
    scheme, or a PostgreSQL URL the client cannot use (the message never shows its password)."""
    text = os.fspath(location)
    url = URL.match(text)
    if url is None:
        path = Path(text).expanduser()
        return IndexLocation("sqlite", str(path), path=path)
    scheme = url.group(1).lower()
    if scheme not in POSTGRES_SCHEMES:
        raise UsageError(
            f"MTJ_INDEX / index= names a {scheme}:// URL: the task index cannot be reached by {scheme}://; "
            "give the path of a SQLite file or a postgresql:// URL"
        )
    register_url(text)
    return _postgres(text, scheme)


def _postgres(text: str, scheme: str) -> IndexLocation:
    parts = urllib.parse.urlsplit(text)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = urllib.parse.unquote(userinfo.partition(":")[0]) if userinfo else ""
    shown = scrub(
        f"{scheme}://{urllib.parse.quote(user) + '@' if user else ''}{hostport}/{parts.path.lstrip('/')}"
    )
    try:
        from .postgres import conninfo_params
    except ImportError:
        raise UsageError(
            f"the task index {shown} is on PostgreSQL, which needs psycopg: "
            "pip install 'mcp-tasks-jupyter[postgres]'"
        ) from None
    try:
        params = conninfo_params(text)
        port = params.get("port")
        if port is not None and not str(port).isdigit():
            raise ValueError(f"the port {port!r} is not a number")
    except Exception as exc:  # psycopg.ProgrammingError for a URL libpq refuses
        raise UsageError(
            f"the {scheme}:// URL of the task index {shown} cannot be used: {scrub(str(exc))}"
        ) from None
    host = str(params.get("host") or "localhost")
    return IndexLocation(
        "postgresql",
        shown,
        url=text,
        host=host,
        database=str(params.get("dbname") or user or "postgres"),
    )
