"""Task dialects and the choice between them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..protocol import tasks_2025
from .base import TaskDialect
from .core_2025 import CallOnlyDialect, Core2025Dialect

if TYPE_CHECKING:
    from ..session import Session

DIALECTS = ("auto", "2025-11-25", "none")
PLANNED = ("ext", "sep1686")


def select_dialect(requested: str, session: "Session") -> TaskDialect:
    """Pick the dialect for a freshly initialised session (``auto``: what the server declared)."""
    caps = session.initialize_result.capabilities if session.initialize_result else {}
    if requested in PLANNED:
        raise UsageError(f"the {requested!r} task dialect is not implemented yet; use 'auto', "
                         f"'2025-11-25' or 'none'", server=session.name)
    if requested not in DIALECTS:
        raise UsageError(f"unknown dialect {requested!r}; choose one of {', '.join(DIALECTS)}",
                         server=session.name)
    if requested == "none":
        return CallOnlyDialect(session, "forced by dialect='none'")
    if requested == "2025-11-25":
        return Core2025Dialect(session, "forced by dialect='2025-11-25'")
    if tasks_2025.server_supports_task_calls(caps):
        return Core2025Dialect(session, f"initialize: protocol {session.protocol_version} with "
                                        f"capabilities.tasks.requests.tools.call")
    return CallOnlyDialect(session, "the server declared no task support: calls run as ordinary "
                                    "requests")


__all__ = ["TaskDialect", "select_dialect", "Core2025Dialect", "CallOnlyDialect", "DIALECTS"]
