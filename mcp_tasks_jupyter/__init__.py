"""mcp-tasks-jupyter: long-running MCP tasks from notebooks.

    import mcp_tasks_jupyter as mtj
    client = await mtj.connect("http://127.0.0.1:8000/mcp")     # or a command for stdio
    task = await client.start_task("research", {"topic": "tides"})
    result = await task
"""

__version__ = "0.1.0"

from .client import Client, connect  # noqa: E402
from .errors import (ConnectionFailed, HTTPStatusError, InvalidMessage, MCPError,  # noqa: E402
                     ProtocolError, RequestTimeout, ServerExited, SessionExpired, TaskCancelled,
                     TaskError, TaskExpired, TaskFailed, TaskLost, TaskNotFound, ToolNotFound,
                     UsageError)
from .protocol.tasks import TaskState  # noqa: E402
from .protocol.types import Tool  # noqa: E402
from .results import ToolResult  # noqa: E402
from .tasks import Progress, TaskHandle  # noqa: E402

__all__ = [
    "connect", "Client", "TaskHandle", "ToolResult", "Tool", "TaskState", "Progress",
    "MCPError", "ConnectionFailed", "ServerExited", "HTTPStatusError", "SessionExpired",
    "ProtocolError", "InvalidMessage", "RequestTimeout", "UsageError", "ToolNotFound",
    "TaskError", "TaskFailed", "TaskCancelled", "TaskNotFound", "TaskExpired", "TaskLost",
]
