"""Task dialects and the choice between them.

``auto`` picks the newest dialect both sides speak, from what the server declared:

1. ``ext``: the stateless wire, and ``server/discover`` lists the extension
   ``capabilities.extensions["io.modelcontextprotocol/tasks"]``;
2. ``2025-11-25``: ``initialize`` declared ``capabilities.tasks.requests.tools.call`` as an object;
3. ``sep1686``: ``initialize`` declared the draft's form: ``capabilities.tasks`` with boolean
   leaves (``{"tools": {"call": true}}``, also under ``requests``) or
   ``capabilities.experimental["modelcontextprotocol.io/tasks"]`` (see protocol/tasks_sep1686.py);
4. ``none``: no task support; calls run as ordinary requests behind the same handle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..protocol import tasks_2025, tasks_ext, tasks_sep1686
from .core_2025 import CallOnlyDialect, Core2025Dialect
from .dialect import TaskDialect
from .ext import ExtDialect
from .sep1686 import Sep1686Dialect

if TYPE_CHECKING:
    from ..session.session import Session

DIALECTS = ("auto", "2025-11-25", "ext", "sep1686", "none")
#: Dialects that live on the stateful wire (``initialize``) and those on the stateless one.
STATEFUL = frozenset({"2025-11-25", "sep1686"})
STATELESS = frozenset({"ext"})


def check_dialect(requested: str) -> None:
    if requested not in DIALECTS:
        raise UsageError(f"unknown dialect {requested!r}; choose one of {', '.join(DIALECTS)}")


def _declares_2025_calls(caps: dict[str, Any]) -> bool:
    """``tasks.requests.tools.call`` present as an object (the 2025-11-25 form, not the draft's ``true``)."""
    if not tasks_2025.server_supports_task_calls(caps):
        return False
    return isinstance(caps["tasks"]["requests"]["tools"]["call"], dict)


def select_dialect(requested: str, session: Session) -> TaskDialect:
    """Pick the dialect for a connected session (``auto``: what the server declared)."""
    check_dialect(requested)
    caps = session.server_capabilities
    version = session.protocol_version
    if requested == "none":
        return CallOnlyDialect(session, "forced by dialect='none'")
    if session.modern:
        if requested in STATEFUL:
            raise UsageError(
                f"the {requested!r} task dialect needs the stateful wire (initialize), but "
                f"the server speaks {version} statelessly",
                server=session.name,
            )
        declared = tasks_ext.server_supports(caps)
        if requested == "ext":
            return ExtDialect(
                session,
                "forced by dialect='ext'"
                + ("" if declared else " (server/discover did not list the tasks extension)"),
            )
        if declared:
            return ExtDialect(
                session,
                f"server/discover: protocol {version} with capabilities.extensions[{tasks_ext.EXTENSION!r}]",
            )
        return CallOnlyDialect(
            session,
            f"server/discover: protocol {version} without the tasks extension: calls run as ordinary requests",
        )
    if requested == "ext":
        raise UsageError(
            f"the 'ext' task dialect needs the stateless 2026-07-28 wire, but the server "
            f"answered initialize with protocol {version}",
            server=session.name,
        )
    if requested == "2025-11-25":
        return Core2025Dialect(session, "forced by dialect='2025-11-25'")
    if requested == "sep1686":
        return Sep1686Dialect(session, "forced by dialect='sep1686'")
    if _declares_2025_calls(caps):
        return Core2025Dialect(
            session, f"initialize: protocol {version} with capabilities.tasks.requests.tools.call"
        )
    if tasks_sep1686.server_signals(caps):
        return Sep1686Dialect(
            session, f"initialize: protocol {version} with the SEP-1686 draft's tasks capability"
        )
    return CallOnlyDialect(session, "the server declared no task support: calls run as ordinary requests")


__all__ = [
    "DIALECTS",
    "STATEFUL",
    "STATELESS",
    "CallOnlyDialect",
    "Core2025Dialect",
    "ExtDialect",
    "Sep1686Dialect",
    "TaskDialect",
    "check_dialect",
    "select_dialect",
]
