"""The scripted fault server (``server.Brain``) over stdio, in a child process.

    python tests/faults/stdio_server.py SCENARIO

Newline-delimited JSON-RPC on stdin/stdout; SCENARIO (one of ``SCENARIOS``) scripts how it misbehaves.
The environment variable ``FAULT_SECRET`` (when set) is what a scenario echoes back to test secrecy.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server import SILENT, Brain, Error, Raw


def _write(line: str | bytes) -> None:
    data = line.encode() if isinstance(line, str) else line
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def plain(brain: Brain) -> None:
    """Behaves."""


def exit_mid_task(brain: Brain) -> None:
    """The process dies (code 3) once a task exists, with the secret in its last words on stderr."""

    def die(message: dict[str, Any]) -> Any:
        sys.stderr.write(f"fatal: could not use credential {os.environ.get('FAULT_SECRET', '')}\n")
        sys.stderr.flush()
        os._exit(3)

    brain.script["tasks/get"] = die


def garbage_framing(brain: Brain) -> None:
    """Before every tasks/get answer: a line that is not JSON, half a message, a blank line, bad bytes."""

    def noisy(message: dict[str, Any]) -> Any:
        _write("this is not json")
        _write('{"jsonrpc": "2.0", "id": ')
        _write("")
        _write(b"\xff\xfe\x00 bad bytes")
        _write('{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": NaN}}')
        return None

    brain.script["tasks/get"] = noisy


def echo_secret_in_errors(brain: Brain) -> None:
    """Every tasks/get is refused with an error message quoting the secret."""
    brain.script["tasks/get"] = lambda m: Error(-32603, f"backend refused key {os.environ.get('FAULT_SECRET')}")


def silent_tasks_get(brain: Brain) -> None:
    """tasks/get is never answered."""
    brain.script["tasks/get"] = lambda m: SILENT


def ignores_discover(brain: Brain) -> None:
    """A legacy server that ignores ``server/discover`` (no answer at all) but answers a ping."""
    brain.script["server/discover"] = lambda m: SILENT


def overflowing_answers(brain: Brain) -> None:
    """tools/call and tasks/get are answered with a number too large for a double (valid JSON text)."""

    def overflow(message: dict[str, Any]) -> Any:
        return Raw(200, b'{"jsonrpc": "2.0", "id": %d, "result": {"pollInterval": 1e400}}' % message["id"], "")

    brain.script["tools/call"] = overflow
    brain.script["tasks/get"] = overflow


SCENARIOS: dict[str, Callable[[Brain], None]] = {
    f.__name__: f
    for f in (
        plain,
        exit_mid_task,
        garbage_framing,
        echo_secret_in_errors,
        silent_tasks_get,
        ignores_discover,
        overflowing_answers,
    )
}


async def main(scenario: str) -> None:
    brain = Brain(name=f"fault-stdio-{scenario}")
    SCENARIOS[scenario](brain)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def pump() -> None:
        while True:
            _write(json.dumps(await brain.outbox.get()))

    async def answer(message: dict[str, Any]) -> None:
        reply = await brain.handle(message)
        if reply is SILENT or reply is None:
            return
        if isinstance(reply, Raw):
            _write(reply.body)
            return
        _write(json.dumps(reply))

    pumping = asyncio.create_task(pump())
    jobs: set[asyncio.Task[None]] = set()
    while line := await reader.readline():
        job = asyncio.create_task(answer(json.loads(line)))
        jobs.add(job)
        job.add_done_callback(jobs.discard)
    pumping.cancel()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
