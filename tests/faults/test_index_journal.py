"""The task index's journal: WAL on local disks, a rollback journal on network file systems (found from the
mount table) or where ``MTJ_INDEX_JOURNAL`` says so."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import pytest

from mcp_tasks_jupyter.index import journal as index_journal
from mcp_tasks_jupyter.index.journal import filesystem_type_from_mountinfo, parse_mountinfo
from mcp_tasks_jupyter.index.task_index import ServerIdentity, TaskIndex

DEMO = ServerIdentity("demo", "http://127.0.0.1:1/mcp")

MOUNTINFO = r"""22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
40 22 0:35 / /home rw,relatime shared:20 master:3 - nfs4 filer:/export/home rw,vers=4.2,sec=sys
41 40 8:2 / /home/alice/scratch rw,relatime - ext4 /dev/sdb1 rw
42 22 0:40 / /mnt/team\040share rw,relatime - cifs //nas/team rw,vers=3.1.1
43 22 0:41 / /mnt/remote rw,nosuid - fuse.sshfs alice@host:/data rw,user_id=1000
44 22 0:42 / /lustre rw - lustre 10.0.0.1@tcp:/fs rw
not a mount line
"""


def journal_of(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        db.close()


def test_the_mount_table_says_which_file_system_a_path_is_on() -> None:
    mounts = parse_mountinfo(MOUNTINFO)
    assert ("/mnt/team share", "cifs") in mounts and ("/home", "nfs4") in mounts and len(mounts) == 7
    on = lambda path: filesystem_type_from_mountinfo(MOUNTINFO, path)  # noqa: E731
    assert on("/home/alice/.local/share/mcp-tasks-jupyter") == "nfs4"
    assert on("/home") == "nfs4"
    assert on("/home/alice/scratch/index") == "ext4"  # the longest mount point that holds it
    assert on("/homework/x") == "ext4"  # a prefix of the name is not a parent directory
    assert on("/mnt/team share/tasks") == "cifs"
    assert on("/mnt/remote/a") == "fuse.sshfs" and on("/lustre/u/a") == "lustre"
    assert on("/var/tmp") == "ext4"
    assert filesystem_type_from_mountinfo("", "/x") is None
    for kind in ("nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "fuse.sshfs", "9p"):
        assert kind in index_journal.NETWORK_FILE_SYSTEMS


def test_the_probe_reads_this_machines_mount_table(tmp_path: Path) -> None:
    if not os.path.exists(index_journal.MOUNTINFO):
        pytest.skip("no /proc/self/mountinfo here")  # pragma: no cover - Linux CI has it
    kind = index_journal.filesystem_type(tmp_path)
    assert isinstance(kind, str) and kind


def test_a_network_file_system_gets_a_rollback_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probed: list[str] = []
    monkeypatch.setattr(index_journal, "filesystem_type", lambda d: (probed.append(str(d)), "nfs4")[1])
    path = tmp_path / "tasks.sqlite3"
    index = TaskIndex(path)
    row = index.add(DEMO, "slow_compute", {"n": 1}, task_id="t1")
    assert row is not None and probed == [str(tmp_path)]
    assert index.journal_mode == "delete" and journal_of(path) == "delete"
    index.update(row, task_id=None, status="completed", status_message=None, result={"content": []})
    assert index.cached(DEMO.target, "slow_compute", {"n": 1}) is not None
    index.close()
    assert not (tmp_path / "tasks.sqlite3-wal").exists()


def test_an_existing_wal_index_on_a_network_file_system_leaves_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tasks.sqlite3"
    local = TaskIndex(path)
    local.records()
    assert local.journal_mode == "wal"
    local.close()
    monkeypatch.setattr(index_journal, "filesystem_type", lambda d: "cifs")
    remote = TaskIndex(path)
    remote.records()
    assert remote.journal_mode == "delete" and journal_of(path) == "delete"


def test_the_environment_overrides_the_detection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MTJ_INDEX_JOURNAL", "delete")  # on a local disk
    index = TaskIndex(tmp_path / "a.sqlite3")
    index.records()
    assert index.journal_mode == "delete" and journal_of(tmp_path / "a.sqlite3") == "delete"

    monkeypatch.setattr(index_journal, "filesystem_type", lambda d: "nfs")
    monkeypatch.setenv("MTJ_INDEX_JOURNAL", "WAL")  # the user knows better (a single host)
    index = TaskIndex(tmp_path / "b.sqlite3")
    index.records()
    assert index.journal_mode == "wal" and journal_of(tmp_path / "b.sqlite3") == "wal"

    monkeypatch.setenv("MTJ_INDEX_JOURNAL", "sometimes")
    with caplog.at_level(logging.WARNING, logger="mcp_tasks_jupyter"):
        index = TaskIndex(tmp_path / "c.sqlite3")
        index.records()
    assert index.journal_mode == "delete"  # ignored, so the detection (nfs) decides
    assert any("MTJ_INDEX_JOURNAL='sometimes'" in r.getMessage() for r in caplog.records)
