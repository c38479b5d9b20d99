"""Start a peer process, wait until it is ready, and always stop it again.

A peer runs in its own session (process group), with stdout and stderr going to files rather
than pipes, so a chatty peer can never block on a full pipe. On exit the whole group gets
SIGTERM, then SIGKILL if it is still there after a grace period.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .paths import REPO_ROOT


class PeerStartError(RuntimeError):
    """A peer exited or did not become ready in time; the message ends with its output."""


@dataclass
class PeerProcess:
    argv: list[str]
    popen: subprocess.Popen[bytes]
    stdout_path: Path
    stderr_path: Path

    def output(self, limit: int = 4000) -> str:
        """The last `limit` characters of stdout and stderr, for failure messages."""
        parts = []
        for name, path in (("stdout", self.stdout_path), ("stderr", self.stderr_path)):
            text = path.read_text(errors="replace") if path.exists() else ""
            parts.append(f"--- {name} ---\n{text[-limit:]}")
        return "\n".join(parts)

    def fail(self, why: str) -> PeerStartError:
        return PeerStartError(f"{why}\n$ {' '.join(self.argv)}\n{self.output()}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def python_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a Python peer: unbuffered output, and this checkout importable."""
    env = dict(os.environ if env is None else env)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


def _stop(process: subprocess.Popen[bytes], grace: float) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            return
        # Not reaped yet, so the group id is still the one start_new_session gave this peer.
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def spawn(
    argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path = REPO_ROOT, grace: float = 5.0
) -> Iterator[PeerProcess]:
    """Run `argv` for the duration of the block; stop its whole process group afterwards."""
    with tempfile.TemporaryDirectory(prefix="mcp-peer-") as tmp:
        stdout_path, stderr_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
            popen = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
        process = PeerProcess(list(argv), popen, stdout_path, stderr_path)
        try:
            yield process
        finally:
            _stop(popen, grace)


def wait_for_port(process: PeerProcess, port: int, timeout: float) -> None:
    """Return once 127.0.0.1:`port` accepts a connection; fail if the process exits first."""
    deadline = time.monotonic() + timeout
    while True:
        if process.popen.poll() is not None:
            raise process.fail(f"peer exited with code {process.popen.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise process.fail(f"peer did not listen on 127.0.0.1:{port} within {timeout:g} s")
        time.sleep(0.05)


def wait_for_stdout(process: PeerProcess, pattern: str, timeout: float, *, stderr: bool = False) -> re.Match[str]:
    """Return the first match of `pattern` in the peer's stdout (or stderr); fail if it exits or times out."""
    regex = re.compile(pattern)
    deadline = time.monotonic() + timeout
    path = process.stderr_path if stderr else process.stdout_path
    while True:
        exited = process.popen.poll() is not None
        match = regex.search(path.read_text(errors="replace"))
        if match:
            return match
        if exited:
            raise process.fail(f"peer exited with code {process.popen.returncode} before printing /{pattern}/")
        if time.monotonic() > deadline:
            raise process.fail(f"peer did not print /{pattern}/ within {timeout:g} s")
        time.sleep(0.05)
