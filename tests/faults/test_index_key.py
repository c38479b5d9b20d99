"""The result cache's argument digests are HMACs under a per-installation key file, not plain hashes; an
index of schema version 1 (plain SHA-256 digests) is migrated."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_tasks_jupyter.index.key import KEY_BYTES, installation_key, key_path
from mcp_tasks_jupyter.index.task_index import (
    SCHEMA_VERSION,
    ServerIdentity,
    TaskIndex,
    arguments_key,
    canonical_json,
)
from tests.support.processes import python_env

DEMO = ServerIdentity("demo", "http://127.0.0.1:1/mcp")
ARGS = {"pin": "4711", "label": "x"}  # a short secret under a key that is not redacted
WAIT = 20


def stored_keys(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [r[0] for r in db.execute("SELECT args_key FROM tasks ORDER BY recorded_at")]
    finally:
        db.close()


def test_the_cache_key_is_an_hmac_under_a_private_key_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    old_umask = os.umask(0)  # the file is private whatever the umask
    try:
        index = TaskIndex(path)
        row = index.add(DEMO, "lookup", ARGS)
    finally:
        os.umask(old_umask)
    assert row is not None
    key_file = key_path(path)
    assert key_file == tmp_path / "tasks.sqlite3.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = bytes.fromhex(key_file.read_text().strip())
    assert len(key) == KEY_BYTES and index.key == key
    [digest] = stored_keys(path)
    plain = hashlib.sha256(canonical_json(ARGS).encode()).hexdigest()
    assert digest != plain
    assert digest == hmac.new(key, canonical_json(ARGS).encode(), hashlib.sha256).hexdigest()
    assert digest == arguments_key(ARGS, key) == index.arguments_key(dict(reversed(ARGS.items())))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_two_index_instances_share_the_key_and_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    first = TaskIndex(path)
    row = first.add(DEMO, "lookup", ARGS, task_id="t1")
    assert row is not None
    first.update(row, task_id="t1", status="completed", status_message=None, result={"content": []})
    second = TaskIndex(path)
    hit = second.cached(DEMO.target, "lookup", dict(ARGS))
    assert hit is not None and hit.id == row and second.key == first.key
    assert second.cached(DEMO.target, "lookup", {**ARGS, "pin": "4712"}) is None
    assert TaskIndex(tmp_path / "other" / "tasks.sqlite3").key != first.key  # another installation


MAKE_KEY = """
import sys
from mcp_tasks_jupyter.index.key import installation_key
sys.stdin.readline()  # start together
print(installation_key(sys.argv[1]).hex())
"""


@pytest.mark.loopback
def test_processes_racing_to_make_the_key_agree_on_one(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3.key"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", MAKE_KEY, str(path)],
            env=python_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    for racer in racers:
        assert racer.stdin is not None
        racer.stdin.write(b"go\n")
        racer.stdin.flush()
    keys = set()
    for racer in racers:
        out, err = racer.communicate(timeout=WAIT)
        assert racer.returncode == 0, err.decode()
        keys.add(out.strip().decode())
    assert keys == {installation_key(path).hex()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks.sqlite3.key"]


def test_a_broken_key_file_is_reported_and_left_alone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "tasks.sqlite3"
    key_path(path).write_text("not a key\n")
    index = TaskIndex(path)
    assert index.add(DEMO, "lookup", ARGS) is None
    assert index.cached(DEMO.target, "lookup", ARGS) is None
    assert any("does not hold a key" in r.getMessage() for r in caplog.records)
    assert key_path(path).read_text() == "not a key\n"


V1_SCHEMA = """
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY, server_name TEXT NOT NULL, target TEXT NOT NULL, transport TEXT, protocol TEXT,
    dialect TEXT, tool TEXT NOT NULL, arguments TEXT NOT NULL, args_key TEXT NOT NULL, task_id TEXT,
    notebook TEXT, out_var TEXT, created_at TEXT, ttl_ms INTEGER, status TEXT NOT NULL, status_message TEXT,
    result TEXT, recorded_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE INDEX tasks_by_call ON tasks (target, tool, args_key);
CREATE INDEX tasks_by_notebook ON tasks (target, notebook, status);
PRAGMA user_version = 1;
"""


def test_a_version_1_index_is_migrated_and_its_plain_digests_stop_matching(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    plain = hashlib.sha256(canonical_json(ARGS).encode()).hexdigest()
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(V1_SCHEMA)
    db.execute(
        "INSERT INTO tasks (id, server_name, target, tool, arguments, args_key, task_id, status, result, "
        "recorded_at, updated_at) VALUES (1, 'demo', ?, 'lookup', ?, ?, 'old-1', 'completed', ?, 1.0, 1.0)",
        (DEMO.target, json.dumps(ARGS), plain, json.dumps({"content": []})),
    )
    db.commit()
    db.close()

    index = TaskIndex(path)
    assert index.cached(DEMO.target, "lookup", ARGS) is None  # the old digest matches no more
    [old] = index.records()
    assert (old.id, old.task_id, old.status) == (1, "old-1", "completed")  # the record itself stays
    row = index.add(DEMO, "lookup", ARGS, task_id="new-1")
    assert row is not None
    index.update(row, task_id=None, status="completed", status_message=None, result={"content": []})
    hit = index.cached(DEMO.target, "lookup", ARGS)
    assert hit is not None and hit.task_id == "new-1"
    index.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT args_key FROM tasks WHERE id = 1").fetchone() == ("",)
    db.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert plain.encode() not in raw  # blanked, not left in the file's free space
