"""Which journal the task index's SQLite file uses: WAL where it works, a rollback journal on network file systems.

WAL keeps its index in shared memory (the ``-shm`` file, mapped by every process), which only works
when all of them run on the host that owns the file system. On NFS, SMB, Lustre and the like (home
directories on shared clusters) that is not so, and WAL can corrupt the database; there the index uses
``journal_mode=DELETE``. ``MTJ_INDEX_JOURNAL=wal|delete`` overrides the detection.
"""

from __future__ import annotations

import logging
import os
import re

log = logging.getLogger(__name__)

JOURNAL_ENV = "MTJ_INDEX_JOURNAL"
MOUNTINFO = "/proc/self/mountinfo"
#: File system types (as ``/proc/self/mountinfo`` names them) where several hosts may open one file.
NETWORK_FILE_SYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "lustre",
        "gpfs",
        "beegfs",
        "ceph",
        "fuse.ceph",
        "fuse.cephfs",
        "fuse.sshfs",
        "9p",
        "afs",
        "glusterfs",
        "fuse.glusterfs",
        "ocfs2",
        "gfs2",
        "panfs",
        "orangefs",
        "pvfs2",
        "fuse.juicefs",
        "fuse.s3fs",
        "fuse.rclone",
        "davfs",
        "fuse.davfs2",
        "webdav",
    }
)

_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def parse_mountinfo(text: str) -> list[tuple[str, str]]:
    """The (mount point, file system type) of each line of ``/proc/self/mountinfo`` text.

    A line reads ``id parent major:minor root mount-point options [optional fields] - type source
    super-options``; the mount point escapes space, tab, newline and backslash as ``\\ooo``.
    Malformed lines are skipped.
    """
    mounts = []
    for line in text.splitlines():
        before, sep, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if not sep or len(fields) < 5 or not tail:
            continue
        mount_point = _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        mounts.append((mount_point, tail[0]))
    return mounts


def filesystem_type_from_mountinfo(text: str, path: str) -> str | None:
    """The type of the file system ``path`` (absolute, symlinks resolved) lies on, per the mount table ``text``:
    the mount with the longest mount point that contains it (the last one mounted when several share it)."""
    best: tuple[int, str] | None = None
    for mount_point, kind in parse_mountinfo(text):
        inside = mount_point == "/" or path == mount_point or path.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= best[0]):
            best = (len(mount_point), kind)
    return best[1] if best else None


def filesystem_type(directory: str | os.PathLike[str]) -> str | None:
    """The type of the file system ``directory`` is on (``ext4``, ``nfs4``, ...); None where unknown (no
    ``/proc``, as on macOS)."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError:
        return None
    return filesystem_type_from_mountinfo(text, os.path.realpath(directory))


def wanted_journal(directory: str | os.PathLike[str]) -> str:
    """``wal`` or ``delete``: ``$MTJ_INDEX_JOURNAL`` when set, else ``delete`` on a network file system."""
    override = os.environ.get(JOURNAL_ENV, "").strip().lower()
    if override in ("wal", "delete"):
        return override
    if override:
        log.warning("%s=%r is neither 'wal' nor 'delete': ignored", JOURNAL_ENV, override)
    kind = filesystem_type(directory)
    if kind is not None and kind.lower() in NETWORK_FILE_SYSTEMS:
        log.info(
            "the task index directory %s is on %s, a network file system: it uses a rollback journal",
            directory,
            kind,
        )
        return "delete"
    return "wal"
