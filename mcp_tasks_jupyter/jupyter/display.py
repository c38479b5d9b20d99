"""Showing tasks in a notebook: the live widget beside a static summary that survives saving.

(Interface fixed here; the widget implementation lives in ``widgets/``.)
"""

from __future__ import annotations

from typing import Sequence

from ..tasks import TaskHandle


def show_task(handle: TaskHandle) -> None:
    """Display ``handle`` below the current cell: a live widget and a static summary updated at the end."""
    from IPython.display import display
    display(handle)


def show_board(handles: Sequence[TaskHandle], *, server: str | None = None,
               status: str | None = None) -> None:
    """Display a live board of ``handles`` filtered by server name and status."""
    from IPython.display import display
    for handle in handles:
        if (server is None or handle.server == server) and (status is None or handle.status == status):
            display(handle)
