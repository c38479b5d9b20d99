"""The hand-off between the Jupyter server's sign-in route and the kernel that waits for the answer.

A kernel signing in through the Jupyter server (``redirect_uri`` is the server's
``{base_url}mcp-tasks/oauth/callback``) registers its sign-in as one file in
``{runtime_dir}/mcp-tasks-oauth/``: named by a hash of the sign-in's ``state`` (the state itself is
never written down), holding the port of the kernel's loopback listener. The directory is 0700 and
the file 0600: only the user who runs the server and its kernels can read or plant one. The server's
route finds the file by the answer's ``state`` and forwards the answer to that port, where the
listener checks it like any other (``oauth/answers.py``); an unknown ``state`` finds no file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

#: The route under the Jupyter server's ``base_url``.
CALLBACK_PATH = "mcp-tasks/oauth/callback"
#: The route the JupyterLab extension asks to learn that the server extension is there.
READY_PATH = "mcp-tasks/oauth/ready"
#: The folder of pending sign-ins under the Jupyter runtime directory.
FOLDER = "mcp-tasks-oauth"
MAX_FILE_BYTES = 256
MAX_STATE_CHARS = 512


def state_file(folder: Path, state: str) -> Path:
    """The file of the sign-in whose ``state`` this is."""
    return folder / f"{hashlib.sha256(state.encode()).hexdigest()}.json"


class JupyterServerRelay:
    """Sign-ins answered through the Jupyter server's route (``redirect_uri``), handed to the kernel
    through files in ``folder`` (``{runtime_dir}/mcp-tasks-oauth``)."""

    def __init__(self, redirect_uri: str, folder: Path) -> None:
        self.redirect_uri = redirect_uri
        self.folder = folder

    def ready(self) -> bool:
        """Make the folder (0700); False when it cannot be made here (the kernel cannot use the route)."""
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.folder, 0o700)
        except OSError:
            return False
        return True

    def register(self, state: str, port: int) -> Callable[[], None]:
        """Say that the answer carrying ``state`` goes to the listener on ``port``; returns the undo."""
        self.ready()
        path = state_file(self.folder, state)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump({"port": port}, file)

        def unregister() -> None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

        return unregister


def listener_port(folder: Path, state: str) -> int | None:
    """The loopback port of the kernel waiting for the answer with ``state`` (None: no such sign-in)."""
    if not state or len(state) > MAX_STATE_CHARS:
        return None
    path = state_file(folder, state)
    try:
        info = path.stat()
        if info.st_size > MAX_FILE_BYTES or info.st_mode & 0o077 or info.st_uid != os.getuid():
            return None  # not one a kernel of this user wrote
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    port = data.get("port") if isinstance(data, dict) else None
    if isinstance(port, int) and not isinstance(port, bool) and 0 < port <= 65535:
        return port
    return None
