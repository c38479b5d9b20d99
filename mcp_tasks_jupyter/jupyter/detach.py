"""Start stdio servers in their own session, so interrupting a cell does not kill them.

A Jupyter kernel leads its own process group, and an interrupt (jupyter_client's ``signal`` mode,
and ipykernel's own ``interrupt_request``) sends SIGINT to that whole group: a stdio server spawned
by the kernel would die with the interrupted cell, and every task on it with it. The runtime
therefore starts stdio servers through a tiny launcher that calls ``setsid()`` and then ``exec``s
the real command: same process id, same pipes, but a process group of its own. The server still
ends with the kernel: the runtime closes it at shutdown, and a killed kernel closes its stdin.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Sequence

from ..errors import ConnectionFailed

_LAUNCHER = (
    "import os, sys\n"
    "os.setsid()\n"
    "try:\n"
    "    os.execvp(sys.argv[1], sys.argv[1:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot start {sys.argv[1]!r}: {exc}\\n')\n"
    "    sys.exit(127)\n"
)


def supported() -> bool:
    """Whether this platform has process groups to leave (POSIX)."""
    return os.name == "posix" and hasattr(os, "setsid")


def detached_argv(argv: Sequence[str], *, env: dict[str, str] | None = None, server: str | None = None) -> list[str]:
    """``argv`` wrapped in the launcher (unchanged where there are no process groups).

    Raises ConnectionFailed, as the stdio transport would, when the program does not exist.
    """
    argv = [str(a) for a in argv]
    if not argv:
        raise ConnectionFailed("empty server command", server=server)
    if not supported():
        return argv
    path = {**os.environ, **(env or {})}.get("PATH")
    if shutil.which(argv[0], path=path) is None and not os.path.exists(argv[0]):
        raise ConnectionFailed(f"command not found: {argv[0]!r}", server=server)
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, *argv]


__all__ = ["detached_argv", "supported"]
