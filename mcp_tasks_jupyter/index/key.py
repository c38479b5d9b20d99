"""The task index's installation key: 32 random bytes that key the result cache's argument digests (HMAC-SHA256).

A plain hash of a call's arguments would let anyone who reads the index recover a short secret argument
by trying candidates; a keyed digest does not, without the key. The key lives in a file next to the
index (``tasks.sqlite3.key``), readable by its owner only (mode 0600), made on first use. Two processes
racing to make it agree on one key: each writes its own into a private temporary file and hard-links it
into place, and whoever loses reads the winner's. Removing the file makes a new key: earlier results
then no longer match the cache (they stay in the index).

A team sharing one index (a PostgreSQL database, or a SQLite file on a shared disk) shares its key
instead: ``MTJ_INDEX_KEY`` (the key's 64 hex digits) or ``MTJ_INDEX_KEY_FILE`` (a file holding them,
readable by its owner only: mode 0600 is required). With it, the same call on another machine matches;
without it, each user's key is their own and others' records are never cache hits.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from pathlib import Path

log = logging.getLogger(__name__)

KEY_BYTES = 32
#: The team's key itself (64 hex digits), or the file that holds it (mode 0600).
KEY_ENV = "MTJ_INDEX_KEY"
KEY_FILE_ENV = "MTJ_INDEX_KEY_FILE"
#: How long a reader waits for a key file another process is still writing (only where hard links fail).
PARTIAL_WAIT_S = 0.5


def key_path(index_path: str | os.PathLike[str]) -> Path:
    """Where the key of the index at ``index_path`` lives: next to it, named after it."""
    path = Path(index_path)
    return path.with_name(path.name + ".key")


def team_key() -> bytes | None:
    """The team's key from ``MTJ_INDEX_KEY`` or ``MTJ_INDEX_KEY_FILE`` (None when neither is set). Raises
    ValueError when it holds no key or the file can be read by others, OSError when the file cannot be read."""
    given = os.environ.get(KEY_ENV, "").strip()
    if given:
        key = _parse(given.encode("ascii", "replace"))
        if key is None:
            raise ValueError(
                f"{KEY_ENV} is not a key ({2 * KEY_BYTES} hex digits, e.g. from: openssl rand -hex 32)"
            )
        return key
    path = os.environ.get(KEY_FILE_ENV, "").strip()
    if not path:
        return None
    with open(os.path.expanduser(path), "rb") as file:
        info = os.fstat(file.fileno())
        text = file.read(4 * KEY_BYTES).strip()
    if info.st_mode & 0o077:
        raise ValueError(
            f"{KEY_FILE_ENV} {path} can be read by others (mode {info.st_mode & 0o777:o}): chmod 600 it to use it"
        )
    key = _parse(text)
    if key is None:
        raise ValueError(f"{KEY_FILE_ENV} {path} does not hold a key ({2 * KEY_BYTES} hex digits)")
    return key


def _parse(text: bytes) -> bytes | None:
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return key if len(key) == KEY_BYTES else None


def installation_key(path: str | os.PathLike[str]) -> bytes:
    """The key in the file ``path``, made there first if there is none.

    Raises OSError when the file can neither be read nor made, ValueError when it holds no key (it is
    then left alone: remove it to make a new one).
    """
    path = Path(path)
    deadline = time.monotonic() + PARTIAL_WAIT_S
    while True:
        try:
            return _read(path)
        except FileNotFoundError:
            _create(path)
        except ValueError:
            # Only a file made without a hard link can be seen before its key is in (empty, for a moment):
            # wait for its writer, briefly; any other content is no key.
            if time.monotonic() >= deadline or not _just_made_empty(path):
                raise
            time.sleep(0.01)


def _just_made_empty(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return info.st_size == 0 and time.time() - info.st_mtime < 2 * PARTIAL_WAIT_S


def _read(path: Path) -> bytes:
    with open(path, "rb") as file:
        info = os.fstat(file.fileno())
        text = file.read(4 * KEY_BYTES).strip()
    key = _parse(text)
    if key is None:
        raise ValueError(
            f"the task index key file {path} does not hold a key ({2 * KEY_BYTES} hex digits); "
            f"remove it to make a new one (earlier results then no longer match the cache)"
        )
    if info.st_mode & 0o077:
        log.warning(
            "the task index key file %s can be read by others (mode %o): chmod 600 it", path, info.st_mode & 0o777
        )
    return key


def _create(path: Path) -> None:
    """Put a new key at ``path`` unless some other process does first (then theirs stands)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    content = (secrets.token_bytes(KEY_BYTES).hex() + "\n").encode("ascii")
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}")
    _write_new(temporary, content)
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass  # another process made it: theirs is the key
    except OSError:
        # No hard links here (some SMB or FUSE mounts): exclusive creation, which a reader may see
        # half written for a moment (installation_key waits for that).
        try:
            _write_new(path, content)
        except FileExistsError:
            pass
    finally:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _write_new(path: Path, content: bytes) -> None:
    """Write ``content`` to a file ``path`` that must not exist yet, readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
