"""stdio transport: spawn the server, newline-delimited JSON on its stdin/stdout, stderr kept."""

from __future__ import annotations

import asyncio
import collections
import os
import shlex
import shutil
from typing import Any, Sequence

from ..errors import ConnectionFailed, InvalidMessage, ServerExited
from ..protocol import jsonrpc
from .base import Transport, TransportEvents

#: Longest line accepted from a server (images and reports can be large).
MAX_LINE_BYTES = 64 * 1024 * 1024
STDERR_LINES_KEPT = 200
SHUTDOWN_GRACE_S = 2.0


def _argv(command: str | Sequence[str]) -> list[str]:
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        raise ConnectionFailed("empty server command")
    return argv


class StdioTransport(Transport):
    """Runs ``command`` as a child process and talks to it over its standard streams.

    ``env`` is added to this process's environment. Shutdown closes stdin, waits, then terminates
    and finally kills.
    """

    kind = "stdio"

    def __init__(self, command: str | Sequence[str], *, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.argv = _argv(command)
        self.label = self.server_name = shlex.join(self.argv)
        self._env = {**os.environ, **env} if env else None
        self._cwd = cwd
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        self._readers: list[asyncio.Task[None]] = []
        self._closing = False
        self._exit_error: ServerExited | None = None

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    async def start(self, events: TransportEvents) -> None:
        program = self.argv[0]
        if shutil.which(program, path=(self._env or os.environ).get("PATH")) is None \
                and not os.path.exists(program):
            raise ConnectionFailed(f"command not found: {program!r} (from {self.label!r})",
                                   server=self.server_name)
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self._env, cwd=self._cwd,
                limit=MAX_LINE_BYTES,
                # Its own session: an interrupt sent to the kernel's process group must not kill it.
                start_new_session=True)
        except OSError as exc:
            raise ConnectionFailed(f"cannot start {self.label!r}: {exc}", server=self.server_name) from None
        self._readers = [asyncio.create_task(self._read_stdout(events)),
                         asyncio.create_task(self._read_stderr())]

    async def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        while line := await self._proc.stderr.readline():
            self._stderr.append(line.decode(errors="replace").rstrip())

    async def _read_stdout(self, events: TransportEvents) -> None:
        assert self._proc and self._proc.stdout
        stdout = self._proc.stdout
        try:
            while True:
                try:
                    line = await stdout.readline()
                except ValueError:  # longer than MAX_LINE_BYTES
                    events.noise_received(InvalidMessage(
                        f"a line longer than {MAX_LINE_BYTES} bytes was dropped", server=self.server_name))
                    continue
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    messages = jsonrpc.decode(line)
                except jsonrpc.MessageError as exc:
                    events.noise_received(InvalidMessage(
                        f"unreadable line from the server: {exc}: {line[:200]!r}", server=self.server_name))
                    continue
                for message in messages:
                    events.message_received(message)
        finally:
            if not self._closing:
                events.connection_lost(await self._exited())

    async def _exited(self) -> ServerExited:
        assert self._proc
        try:
            code = await asyncio.wait_for(self._proc.wait(), SHUTDOWN_GRACE_S)
        except asyncio.TimeoutError:
            code = None
        # Let the stderr reader drain what the process wrote before dying.
        if len(self._readers) > 1:
            await asyncio.wait([self._readers[1]], timeout=0.5)
        what = f"exited with code {code}" if code is not None else "closed its stdout"
        self._exit_error = ServerExited(f"the server process {what}", server=self.server_name,
                                        returncode=code, stderr=self.stderr_tail)
        return self._exit_error

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise ConnectionFailed("not started", server=self.server_name)
        if self._exit_error is not None or proc.returncode is not None:
            raise self._exit_error or ServerExited(
                f"the server process exited with code {proc.returncode}", server=self.server_name,
                returncode=proc.returncode, stderr=self.stderr_tail)
        try:
            proc.stdin.write(jsonrpc.encode(message) + b"\n")
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ServerExited(f"cannot write to the server process ({exc})", server=self.server_name,
                               returncode=proc.returncode, stderr=self.stderr_tail) from None

    async def close(self) -> None:
        self._closing = True
        proc = self._proc
        if proc is None:
            return
        if proc.returncode is None:
            if proc.stdin and not proc.stdin.is_closing():
                proc.stdin.close()
            for stop in (None, proc.terminate, proc.kill):
                if stop is not None:
                    try:
                        stop()
                    except ProcessLookupError:
                        break
                try:
                    await asyncio.wait_for(proc.wait(), SHUTDOWN_GRACE_S)
                    break
                except asyncio.TimeoutError:
                    continue
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        self._readers = []

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["pid"] = self._proc.pid if self._proc else None
        return info
