"""A real, throwaway PostgreSQL server for the tests of the task index on PostgreSQL (issue 22).

Debian's PostgreSQL 15 (``pg_config --bindir`` names its programs; ``make test`` installs the
``postgresql`` package where it is missing). :class:`PostgresServer` makes a cluster in a temporary
directory (``initdb`` refuses to run as root: as root the cluster belongs to the ``postgres`` user, in a
directory that user can reach), starts it on a free 127.0.0.1 port with password authentication over
TCP (scram-sha-256) and a socket directory of its own, and makes the role ``team``. Each test gets a
database of its own (:meth:`PostgresServer.database`). :meth:`stop` and :meth:`start` make an outage in
the middle of a run; :meth:`close` stops the server and removes everything.

Nothing is skipped: a machine without PostgreSQL fails with what to install.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

from .processes import free_port

#: The role every test connects as, and its password (a secret the tests look for where it must not be).
USER = "team"
PASSWORD_PREFIX = "pw-"
#: A bound on every command here (initdb and a start take about a second each on these machines).
COMMAND_TIMEOUT_S = 120


class PostgresMissing(RuntimeError):
    """PostgreSQL's server programs are not installed."""


def bindir() -> Path:
    """Where ``initdb`` and ``pg_ctl`` are (``pg_config --bindir``)."""
    try:
        found = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=True, timeout=COMMAND_TIMEOUT_S
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PostgresMissing(
            f"PostgreSQL is not installed ({exc}): apt-get install postgresql (make test does it)"
        ) from None
    path = Path(found)
    if not (path / "initdb").exists():
        raise PostgresMissing(f"{path} has no initdb: apt-get install postgresql (make test does it)")
    return path


class PostgresServer:
    """A PostgreSQL cluster of its own on 127.0.0.1 (see the module docstring); started at construction."""

    def __init__(self) -> None:
        self.bin = bindir()
        self.as_root = os.geteuid() == 0
        self.password = PASSWORD_PREFIX + secrets.token_hex(12)
        self.port = free_port()
        # As root the cluster must be reachable by the postgres user: a directory of its own in the
        # system's temporary directory (not a TMPDIR under root's home).
        if self.as_root:
            made = self._run(["mktemp", "-d", "/tmp/mtj-pg.XXXXXXXX"]).strip()
            self.home = Path(made)
        else:
            self.home = Path(tempfile.mkdtemp(prefix="mtj-pg."))
        self.data = self.home / "data"
        self.log = self.home / "server.log"
        try:
            pwfile = self.home / "pw"
            self._write_as_owner(pwfile, self.password + "\n")
            self._run(
                [
                    str(self.bin / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                    f"--pwfile={pwfile}",
                    "--no-sync",
                ]
            )
            self.start()
            self.psql(f"CREATE ROLE {USER} LOGIN PASSWORD '{self.password}' CREATEDB")
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def url(self, database: str, *, password: str | None = None, scheme: str = "postgresql") -> str:
        """The URL of ``database`` as the team role (with ``password``, by default the right one)."""
        return f"{scheme}://{USER}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new, empty database owned by the team role; its URL."""
        name = "tasks_" + secrets.token_hex(6)
        self.psql(f"CREATE DATABASE {name} OWNER {USER}")
        return self.url(name)

    def psql(self, statement: str, database: str = "postgres") -> str:
        """Run ``statement`` as the superuser over the server's own socket; its output."""
        return self._run(
            [
                str(self.bin / "psql"),
                "-h",
                str(self.home),
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                database,
                "-X",
                "-q",
                "-t",
                "-A",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            ]
        )

    def start(self) -> None:
        """Start the server (again), waiting until it takes connections."""
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.home} -c fsync=off"
        self._run(
            [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-o", options, "start"]
        )

    def stop(self) -> None:
        """Stop the server (fast: open connections are closed), waiting until it has."""
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop()
            except (OSError, subprocess.SubprocessError):
                pass
        shutil.rmtree(self.home, ignore_errors=True)

    def server_log(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def _write_as_owner(self, path: Path, text: str) -> None:
        path.write_text(text)
        path.chmod(0o600)
        if self.as_root:
            shutil.chown(path, "postgres", "postgres")

    def _run(self, argv: list[str]) -> str:
        env = dict(os.environ)
        if self.as_root:
            env.pop("TMPDIR", None)  # a TMPDIR under root's home cannot be reached by postgres
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT_S, cwd="/")
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv[:6])} failed ({done.returncode}): {done.stderr.strip()[-2000:]}\n"
                f"{self.server_log() if hasattr(self, 'log') else ''}"
            )
        return done.stdout


def run_sql(location: str, statement: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Run ``statement`` (``?`` placeholders) on the task index at ``location``, either backend, through the
    index's own database interface; the rows it returns (a test's look under the hood)."""
    from mcp_tasks_jupyter.index.task_index import TaskIndex

    index = TaskIndex(location)
    try:
        database = index.database
        db = database.connection(10_000)
        rows = database.execute(db, statement, params)
        return [tuple(row) for row in rows.fetchall()] if statement.lstrip().upper().startswith("SELECT") else []
    finally:
        index.close()
