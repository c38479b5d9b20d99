"""Who the person running a study is: a name, an ORCID iD and an affiliation, kept with every record.

Archives (Zenodo, WorkflowHub, an RO-Crate's ``agent``) expect a person, not a login name. The person
names themselves once, in the first of these places that says (the ORCID optional but checked, the
affiliation optional):

1. ``mtj.set_author(name=..., orcid=..., affiliation=...)`` in this process (``save=True`` also writes
   the setting below);
2. the environment: ``MTJ_AUTHOR``, ``MTJ_ORCID``, ``MTJ_AFFILIATION`` (CI, papermill);
3. the setting file ``mcp-tasks-jupyter.json`` in the Jupyter config directory (``$JUPYTER_CONFIG_DIR``,
   else ``~/.jupyter``): ``{"author": {"name": ..., "orcid": ..., "affiliation": ...}}``. The same file
   may hold ``"license"``: the license a crate is published under (``exports/crate.py``).

Without any, :func:`current_author` is None and a record names only the login name, as before. An ORCID
iD is ``0000-0002-1825-0097`` or ``https://orcid.org/0000-0002-1825-0097``: four groups of four digits,
the last character a check digit (0-9 or X) of ISO 7064 MOD 11-2 (:func:`check_orcid`). A wrong one given
to :func:`set_author` is a UsageError saying what is wrong; one in the environment or the file is left
out of the records, said once in the log.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .json_column import json_object

log = logging.getLogger(__name__)

#: The setting file's name in the Jupyter config directory.
SETTINGS_FILE = "mcp-tasks-jupyter.json"
#: The bounds on what a person names themselves with (a record keeps it as JSON).
MAX_NAME_CHARS = 200
ORCID_URL = "https://orcid.org/"
_ORCID = re.compile(r"^(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])$")


@dataclass(frozen=True)
class Author:
    """The person running a study; ``orcid`` as ``0000-0002-1825-0097`` (see :func:`check_orcid`)."""

    name: str
    orcid: str | None = None
    affiliation: str | None = None

    @property
    def orcid_url(self) -> str | None:
        """The ORCID iD as the URL archives take (``https://orcid.org/...``)."""
        return ORCID_URL + self.orcid if self.orcid else None

    def as_json(self) -> str:
        """What a record's ``author`` column keeps."""
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | None) -> Author | None:
        """A record's ``author`` column read back (None for none or a value this version cannot read)."""
        data = json_object(text)
        if data is None or not isinstance(data.get("name"), str):
            return None
        orcid, affiliation = data.get("orcid"), data.get("affiliation")
        return cls(
            data["name"],
            orcid if isinstance(orcid, str) else None,
            affiliation if isinstance(affiliation, str) else None,
        )


def orcid_check_digit(digits: str) -> str:
    """ISO 7064 MOD 11-2 check character of the first 15 digits of an ORCID iD."""
    total = 0
    for digit in digits:
        total = (total + int(digit)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def check_orcid(orcid: str) -> str:
    """``orcid`` (with or without ``https://orcid.org/``, dashes optional, ``x`` as ``X``) as
    ``0000-0002-1825-0097``; a UsageError saying what is wrong: its form, or its check digit."""
    text = orcid.strip()
    for prefix in (ORCID_URL, "http://orcid.org/", "orcid.org/"):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
            break
    match = _ORCID.match(text.upper())
    if match is None:
        raise UsageError(
            f"{orcid!r} is not an ORCID iD: one is 16 characters in four groups, 0000-0002-1825-0097 "
            "(digits, the last may be X), or https://orcid.org/0000-0002-1825-0097"
        )
    groups = match.groups()
    digits = "".join(groups)
    expected = orcid_check_digit(digits[:15])
    if digits[15] != expected:
        raise UsageError(
            f"{orcid!r} is not an ORCID iD: its check digit is {digits[15]}, but its other digits give "
            f"{expected} (ISO 7064 MOD 11-2); look for a mistyped digit"
        )
    return "-".join(groups)


def make_author(name: str, orcid: str | None = None, affiliation: str | None = None) -> Author:
    """An :class:`Author`, checked: a name (at most :data:`MAX_NAME_CHARS`), an ORCID iD when given."""
    if not isinstance(name, str) or not name.strip():
        raise UsageError("set_author: give the person's name (name='Ada Lovelace')")
    if len(name) > MAX_NAME_CHARS or (affiliation is not None and len(affiliation) > MAX_NAME_CHARS):
        raise UsageError(f"set_author: a name or an affiliation is at most {MAX_NAME_CHARS} characters")
    return Author(
        " ".join(name.split()),
        check_orcid(orcid) if orcid else None,
        " ".join(affiliation.split()) if affiliation and affiliation.strip() else None,
    )


_chosen: Author | None = None
_said: set[str] = set()


def set_author(
    name: str | None = None, orcid: str | None = None, affiliation: str | None = None, *, save: bool = False
) -> Author | None:
    """Name the person running this process's tasks (every record from now on, and every export and
    crate of them, carries it); ``save=True`` also writes it to the setting file, for later kernels.
    ``set_author()`` with no name forgets this process's choice (the environment and the file count
    again). Raises UsageError for an empty name or a wrong ORCID iD."""
    global _chosen
    if name is None:
        if orcid is not None or affiliation is not None:
            raise UsageError("set_author: give the person's name with their ORCID iD or affiliation")
        _chosen = None
        return None
    author = make_author(name, orcid, affiliation)
    if save:
        write_setting("author", {k: v for k, v in asdict(author).items() if v is not None})
    _chosen = author
    return author


def current_author() -> Author | None:
    """The person running this process's tasks, from the first place that says (see the module docstring)."""
    global _named
    if _chosen is not None:
        return _chosen
    name = os.environ.get("MTJ_AUTHOR", "").strip()
    if name:
        said = (name, os.environ.get("MTJ_ORCID"), os.environ.get("MTJ_AFFILIATION"))
    else:
        given = setting("author")
        if not (isinstance(given, dict) and isinstance(given.get("name"), str)):
            return None
        said = (given["name"], given.get("orcid"), given.get("affiliation"))
    # every task record asks: the same words give the same author, checked once
    if _named is not None and _named[0] == said:
        return _named[1]
    orcid, affiliation = said[1], said[2]
    author = _lenient(
        said[0],
        orcid if isinstance(orcid, str) else None,
        affiliation if isinstance(affiliation, str) else None,
        "MTJ_ORCID" if name else str(settings_path()),
    )
    _named = (said, author)
    return author


#: The words an author was last named with (the environment's or the file's) and the author they gave.
_named: tuple[tuple[Any, Any, Any], Author | None] | None = None


def _lenient(name: str, orcid: str | None, affiliation: str | None, where: str) -> Author | None:
    """The author a setting names; a wrong ORCID iD is left out (said once), a wrong name drops it all."""
    try:
        return make_author(name, orcid or None, affiliation)
    except UsageError as exc:
        if where not in _said:
            _said.add(where)
            log.warning("the author named in %s is recorded without its ORCID iD: %s", where, exc.detail)
        try:
            return make_author(name, None, affiliation)
        except UsageError:
            return None


def config_dir() -> Path:
    """The Jupyter config directory as ``jupyter --config-dir`` says by default: ``$JUPYTER_CONFIG_DIR``,
    else ``~/.jupyter`` (read without importing Jupyter: this layer is below it)."""
    configured = os.environ.get("JUPYTER_CONFIG_DIR")
    return Path(configured) if configured else Path(os.path.expanduser("~")) / ".jupyter"


def settings_path() -> Path:
    return Path(_settings_file())


def _settings_file() -> str:
    """``settings_path()`` as text, worked out again only when the variables it depends on change (every
    task record reads the setting file's signature)."""
    global _where
    said = (os.environ.get("JUPYTER_CONFIG_DIR"), os.environ.get("HOME"))
    if _where is None or _where[0] != said:
        _where = (said, str(config_dir() / SETTINGS_FILE))
    return _where[1]


_where: tuple[tuple[str | None, str | None], str] | None = None


#: The file last read, by what ``os.stat`` said of it then: every task record asks for the author, and a
#: sweep's thousands of records each read and parsed the file on the event loop.
_read: tuple[tuple[str, int, int, int], dict[str, Any]] | None = None


def settings() -> dict[str, Any]:
    """The setting file's contents (empty when there is none; one that cannot be read is said once).
    Read again whenever the file changes (another kernel may write it); a new dict at each call."""
    global _read
    path = _settings_file()
    try:
        stat = os.stat(path)
        seen = (path, stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if _read is not None and _read[0] == seen:
            return dict(_read[1])
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        if str(path) not in _said:
            _said.add(str(path))
            log.warning("the setting file %s cannot be read (%s): it is left out", path, exc)
        return {}
    data = data if isinstance(data, dict) else {}
    _read = (seen, data)
    return dict(data)


def setting(key: str) -> Any:
    """One setting of the file (None when not set)."""
    return settings().get(key)


def write_setting(key: str, value: Any) -> Path:
    """Set ``key`` in the setting file (made, with its directory, when missing); its path."""
    global _read
    path = settings_path()
    data = settings()
    data[key] = value
    _read = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"the setting file {path} cannot be written: {exc.strerror or exc}") from None
    return path


__all__ = ["Author", "check_orcid", "current_author", "set_author", "setting", "settings_path", "write_setting"]
