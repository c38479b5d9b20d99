"""``%load_ext mcp_tasks_jupyter``: what loading the extension installs in a shell (the magics of
``magics.py`` and ``map_magics.py``, cells that await them, interrupts, Tab, question forms and the
JupyterLab extension's channel) and what unloading removes. The package's ``load_ipython_extension``
calls :func:`load`; nothing else of the notebook layer is imported before it."""

from __future__ import annotations

from typing import Any

from . import comm, completion, display, interrupts, questions, transform
from .magics import MCPMagics
from .map_magics import MapMagics
from .runtime import get_runtime


def load(shell: Any) -> None:
    """Register the magics and the awaiting transformer on ``shell`` (``%load_ext`` calls this)."""
    if "MCPMagics" not in shell.magics_manager.registry:
        shell.register_magics(MCPMagics(shell))
    if "MapMagics" not in shell.magics_manager.registry:
        shell.register_magics(MapMagics(shell))
    transform.install(shell)
    interrupts.install(shell)  # an interrupted wait for a task: one line, the handle stays bound
    completion.install(shell, get_runtime())  # Tab in the %mcp_* magics: names, tools, argument keys
    questions.install(shell)  # a task's question becomes a form in its widget
    comm.install(shell, get_runtime())  # the JupyterLab extension's sidebar follows this kernel
    display.install(shell)  # a running handle shown again is its live view


def unload(shell: Any) -> None:
    """Remove the magics and the transformer; connections and tasks stay (``%reload_ext`` keeps them)."""
    transform.uninstall(shell)
    interrupts.uninstall(shell)
    completion.uninstall(shell)
    display.uninstall(shell)
    for registered in ("MCPMagics", "MapMagics"):
        magics = shell.magics_manager.registry.pop(registered, None)
        if magics is not None:
            for kind, table in magics.magics.items():
                for name in table:
                    shell.magics_manager.magics[kind].pop(name, None)


__all__ = ["load", "unload"]
