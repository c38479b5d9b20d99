"""mcp-tasks-jupyter: long-running MCP tasks from notebooks.

import mcp_tasks_jupyter as mtj
client = await mtj.connect("http://127.0.0.1:8000/mcp")     # or a command for stdio
task = await client.start_task("research", {"topic": "tides"})
result = await task
"""

import importlib
from typing import TYPE_CHECKING, Any

from .release import __version__ as __version__

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .client import Client, connect
    from .errors import (
        AuthenticationFailed,
        ConnectionFailed,
        HTTPStatusError,
        InvalidMessage,
        MCPError,
        ProtocolError,
        RequestTimeout,
        ServerExited,
        ServerUnreachable,
        SessionExpired,
        SignInFailed,
        TaskCancelled,
        TaskError,
        TaskExpired,
        TaskFailed,
        TaskLost,
        TaskNotFound,
        ToolNotFound,
        UsageError,
    )
    from .exports.frames import to_dataframe
    from .exports.provenance import export, read_export
    from .index.author import Author, set_author
    from .jupyter.widgets.app_widget import redraw_app
    from .oauth import OAuth, TokenStore, finish_sign_in
    from .protocol.task_state import TaskState
    from .protocol.types import Tool
    from .running.batch import Batch
    from .tasks.handle import Progress, TaskHandle
    from .tasks.results import ToolResult
    from .tasks.waiting import as_completed, gather

_ERRORS = (
    "AuthenticationFailed",
    "ConnectionFailed",
    "HTTPStatusError",
    "InvalidMessage",
    "MCPError",
    "ProtocolError",
    "RequestTimeout",
    "ServerExited",
    "ServerUnreachable",
    "SessionExpired",
    "SignInFailed",
    "TaskCancelled",
    "TaskError",
    "TaskExpired",
    "TaskFailed",
    "TaskLost",
    "TaskNotFound",
    "ToolNotFound",
    "UsageError",
)
#: Where each public name lives; it is imported on first use, so that ``python -m mcp_tasks_jupyter.demo``
#: (which needs none of them) starts without loading the client, pydantic and httpx.
_LAZY = {
    **dict.fromkeys(_ERRORS, ".errors"),
    "Client": ".client",
    "connect": ".client",
    "OAuth": ".oauth",
    "TokenStore": ".oauth",
    "finish_sign_in": ".oauth",
    "TaskState": ".protocol.task_state",
    "Tool": ".protocol.types",
    "ToolResult": ".tasks.results",
    "Progress": ".tasks.handle",
    "TaskHandle": ".tasks.handle",
    "Batch": ".running.batch",
    "gather": ".tasks.waiting",
    "as_completed": ".tasks.waiting",
    "export": ".exports.provenance",
    "read_export": ".exports.provenance",
    "to_dataframe": ".exports.frames",
    "Author": ".index.author",
    "set_author": ".index.author",
    "redraw_app": ".jupyter.widgets.app_widget",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


def load_ipython_extension(ipython: "InteractiveShell") -> None:
    """``%load_ext mcp_tasks_jupyter``: the ``%mcp_*`` magics, and cells that await them.

    Also loadable at start-up with ``c.InteractiveShellApp.extensions = ["mcp_tasks_jupyter"]``.
    See ``mcp_tasks_jupyter.jupyter.extension`` and ``magics`` (and ``%mcp_task?`` for each magic's help).
    """
    from .jupyter.extension import load  # the only way in to the IPython layer

    load(ipython)


def unload_ipython_extension(ipython: "InteractiveShell") -> None:
    """``%unload_ext mcp_tasks_jupyter``: remove the magics; connections and tasks stay."""
    from .jupyter.extension import unload

    unload(ipython)


__all__ = [
    "AuthenticationFailed",
    "Author",
    "Batch",
    "Client",
    "ConnectionFailed",
    "HTTPStatusError",
    "InvalidMessage",
    "MCPError",
    "OAuth",
    "Progress",
    "ProtocolError",
    "RequestTimeout",
    "ServerExited",
    "ServerUnreachable",
    "SessionExpired",
    "SignInFailed",
    "TaskCancelled",
    "TaskError",
    "TaskExpired",
    "TaskFailed",
    "TaskHandle",
    "TaskLost",
    "TaskNotFound",
    "TaskState",
    "TokenStore",
    "Tool",
    "ToolNotFound",
    "ToolResult",
    "UsageError",
    "as_completed",
    "connect",
    "export",
    "finish_sign_in",
    "gather",
    "read_export",
    "redraw_app",
    "set_author",
    "to_dataframe",
]
