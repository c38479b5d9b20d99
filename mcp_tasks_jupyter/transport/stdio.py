"""stdio transport: spawn the server, newline-delimited JSON on its stdin/stdout, stderr kept."""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import os
import shlex
import shutil
from collections.abc import Awaitable, Sequence
from typing import Any

from ..errors import ConnectionFailed, InvalidMessage, ServerExited
from ..protocol import jsonrpc
from ..protocol.jsonrpc import RequestId
from ..redact import register_all, scrub
from .base import Jobs, Transport, TransportEvents

log = logging.getLogger(__name__)

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

    def __init__(
        self, command: str | Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None
    ) -> None:
        register_all(env)
        self.argv = _argv(command)
        self.label = self.server_name = scrub(shlex.join(self.argv))
        self._env = {**os.environ, **env} if env else None
        self._cwd = cwd
        self._proc: asyncio.subprocess.Process | None = None
        self._subprocess: asyncio.SubprocessTransport | None = None
        #: The server's stdin, written to directly (the StreamWriter only for ``drain``).
        self._stdin_pipe: asyncio.WriteTransport | None = None
        #: What ``_write`` returns when the bytes are in the pipe: a finished future.
        self._written: asyncio.Future[None] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        #: The transport's group (the stderr reader, the job that reports a closed stdout), a child of
        #: the connection's; and the stderr reader, which a dying server's last words wait for.
        self._jobs: Jobs | None = None
        self._stderr_reader: asyncio.Task[None] | None = None
        self._spawned: asyncio.Future[None] | None = None
        self._closing = False
        self._exit_error: ServerExited | None = None

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The server's process (None before ``start``)."""
        return self._proc

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    async def start(self, events: TransportEvents) -> None:
        self._jobs = events.background.child(f"{self.label} (transport)")
        program = self.argv[0]
        if shutil.which(program, path=(self._env or os.environ).get("PATH")) is None and not os.path.exists(
            program
        ):
            raise ConnectionFailed(
                f"command not found: {program!r} (from {self.label!r})", server=self.server_name
            )
        loop = asyncio.get_running_loop()
        spawned = self._spawned = loop.create_future()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _StdoutLines(
                    loop, functools.partial(self._line, events), lambda: self._stdout_closed(events)
                ),
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
                cwd=self._cwd,
                # Its own session: an interrupt sent to the kernel's process group must not kill it.
                start_new_session=True,
            )
        except OSError as exc:
            raise ConnectionFailed(f"cannot start {self.label!r}: {exc}", server=self.server_name) from None
        self._proc = asyncio.subprocess.Process(transport, protocol, loop)
        self._subprocess = transport
        self._stdin_pipe = transport.get_pipe_transport(0)  # type: ignore[assignment]
        self._written = loop.create_future()
        self._written.set_result(None)
        self._stderr_reader = self._jobs.spawn(self._read_stderr(), name=f"mcp-stderr {self.label}")
        spawned.set_result(None)

    async def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        while line := await self._proc.stderr.readline():
            self._stderr.append(line.decode(errors="replace").rstrip())

    def _line(self, events: TransportEvents, line: bytes | None) -> None:
        """One line of stdout (None: an overlong line was dropped), straight from the pipe callback."""
        if line is None:
            events.noise_received(
                InvalidMessage(f"a line longer than {MAX_LINE_BYTES} bytes was dropped", server=self.server_name)
            )
            return
        if not line or line.isspace():
            return
        try:
            messages = jsonrpc.decode(line)
        except jsonrpc.MessageError as exc:
            error = InvalidMessage(
                f"unreadable line from the server: {exc}: {line[:200]!r}", server=self.server_name
            )
            answered = jsonrpc.answered_id(line)
            if answered is None:
                events.noise_received(error)
            else:  # the request it answers fails now rather than at its timeout
                events.request_failed(answered, error)
            return
        for message in messages:
            events.message_received(message)

    def _stdout_closed(self, events: TransportEvents) -> None:
        if not self._closing and self._jobs is not None:
            self._jobs.spawn(self._lost(events), name=f"mcp-exited {self.label}")

    async def _lost(self, events: TransportEvents) -> None:
        if self._spawned is not None:
            await self._spawned  # stdout may close before subprocess_exec has returned
        events.connection_lost(await self._exited())

    async def _exited(self) -> ServerExited:
        assert self._proc
        try:
            code = await asyncio.wait_for(self._proc.wait(), SHUTDOWN_GRACE_S)
        except TimeoutError:
            code = None
        # Let the stderr reader drain what the process wrote before dying.
        if self._stderr_reader is not None:
            await asyncio.wait([self._stderr_reader], timeout=0.5)
        what = f"exited with code {code}" if code is not None else "closed its stdout"
        self._exit_error = ServerExited(
            f"the server process {what}", server=self.server_name, returncode=code, stderr=self.stderr_tail
        )
        return self._exit_error

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        await self._write(jsonrpc.encode(message) + b"\n")

    def send_request(
        self, msg_id: RequestId, method: str, params: dict[str, Any] | None, headers: dict[str, str] | None = None
    ) -> Awaitable[None]:
        return self._write(jsonrpc.encode_request(msg_id, method, params) + b"\n")

    def _write(self, data: bytes) -> Awaitable[None]:
        """Put ``data`` in the server's stdin pipe. What is returned is awaited: a finished future when
        the bytes are in the pipe (awaiting it does not suspend), else ``drain()``, which waits while
        the pipe is over its high-water mark and reports a pipe that broke."""
        proc, pipe = self._proc, self._stdin_pipe
        if proc is None or pipe is None or self._written is None:
            raise ConnectionFailed("not started", server=self.server_name)
        if self._exit_error is not None or (code := self._subprocess.get_returncode()) is not None:  # type: ignore[union-attr]
            raise self._exit_error or ServerExited(
                f"the server process exited with code {code}",
                server=self.server_name,
                returncode=code,
                stderr=self.stderr_tail,
            )
        pipe.write(data)
        if pipe.get_write_buffer_size() or pipe.is_closing():
            return self._drain(proc)
        return self._written

    async def _drain(self, proc: asyncio.subprocess.Process) -> None:
        try:
            await proc.stdin.drain()  # type: ignore[union-attr]
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ServerExited(
                f"cannot write to the server process ({exc})",
                server=self.server_name,
                returncode=proc.returncode,
                stderr=self.stderr_tail,
            ) from None

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
                except TimeoutError:
                    continue
        if self._jobs is not None:
            await self._jobs.aclose()  # the readers (not the job that closes, if it is one of them)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["pid"] = self._proc.pid if self._proc else None
        return info


class _StdoutLines(asyncio.subprocess.SubprocessStreamProtocol):
    """The child's pipes: stdin and stderr as streams, stdout cut into lines in the loop's data callback.

    Each complete line goes to ``on_line`` at once, so an answer reaches the request waiting for it
    without a reader task waking up in between (a task step and a StreamReader less per message:
    about a tenth of the client's CPU per ``tasks/get`` over stdio). A line longer than MAX_LINE_BYTES
    is dropped (``on_line(None)``); ``on_eof`` runs once stdout is closed.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, on_line: Any, on_eof: Any) -> None:
        super().__init__(limit=MAX_LINE_BYTES, loop=loop)
        self._on_line = on_line
        self._on_eof = on_eof
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._dropping = False  # inside an overlong line: skip up to its end

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if isinstance(data, str):  # never from a subprocess's pipes, but the base class allows it
            data = data.encode()
        if fd != 1:
            super().pipe_data_received(fd, data)
            return
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if self._dropping:
                self._dropping = False
            elif self._partial:
                self._partial.append(data[start:end])
                line = b"".join(self._partial)
                self._partial.clear()
                self._partial_size = 0
                self._deliver(line)
            else:
                self._deliver(data[start:end])
            start = end + 1
        if start < len(data) and not self._dropping:
            self._partial.append(data[start:])
            self._partial_size += len(data) - start
            if self._partial_size > MAX_LINE_BYTES:
                self._partial.clear()
                self._partial_size = 0
                self._dropping = True
                self._deliver(None)

    def _deliver(self, line: bytes | None) -> None:
        try:
            self._on_line(line)
        except Exception:  # a bug downstream must not close the pipe
            log.exception("handling a line from the server failed")

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        super().pipe_connection_lost(fd, exc)
        if fd == 1:
            if self._partial and not self._dropping:
                self._deliver(b"".join(self._partial))  # a last line without its newline
            self._partial.clear()
            self._on_eof()
