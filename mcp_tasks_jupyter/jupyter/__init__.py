"""The notebook surface: kernel runtime, magics, task widgets and displays. Only this layer imports IPython.

``get_runtime()`` is the kernel's owner of connections and tasks, the one the ``%mcp_*`` magics use:
tasks started through it appear on ``%mcp_tasks``.
"""

from .runtime import Runtime, get_runtime

__all__ = ["Runtime", "get_runtime"]
