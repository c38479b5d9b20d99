"""How a handle and a result get their repr and their notebook display: :func:`install_renderers` puts the
views' drawing functions into ``tasks/renderers.py`` (the task layer never imports the views above it).

Called where a client is made (``Client.__init__``): every handle a connection makes, and every result it
returns, draw with them. Until then a plain one-line text stands in. Calling it again changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..tasks import renderers
from .html import result_html, task_html
from .text import result_text, task_text
from .view import view_of

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle


def install_renderers() -> None:
    """Draw every ``TaskHandle`` and ``ToolResult`` with the views from now on: ``repr`` is
    ``text.task_text`` / ``text.result_text``, ``_repr_mimebundle_`` adds ``html.task_html`` /
    ``html.result_html``; a handle is drawn from its snapshot (``view.view_of``)."""
    renderers.install(task_text=_task_text, task_html=_task_html, result_text=result_text, result_html=result_html)


def _task_text(handle: TaskHandle) -> str:
    return task_text(view_of(handle))


def _task_html(handle: TaskHandle) -> str:
    return task_html(view_of(handle))


__all__ = ["install_renderers"]
