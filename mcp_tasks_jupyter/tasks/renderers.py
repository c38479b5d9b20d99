"""How a handle and a result show themselves (``repr``, a notebook's rich display) without the task layer
importing the views above it: ``views/install.py``'s ``install_renderers`` puts the views' functions here,
called where a client is made (``Client.__init__``), so every handle a connection makes has them. Until then a
plain one-line text stands in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .handle import TaskHandle
    from .results import ToolResult


class Renderers:
    """The functions that draw a task and a result as text and as self-contained HTML."""

    task_text: Callable[[TaskHandle], str] | None = None
    task_html: Callable[[TaskHandle], str] | None = None
    result_text: Callable[[ToolResult], str] | None = None
    result_html: Callable[[ToolResult], str] | None = None


RENDERERS = Renderers()


def install(
    *,
    task_text: Callable[[TaskHandle], str],
    task_html: Callable[[TaskHandle], str],
    result_text: Callable[[ToolResult], str],
    result_html: Callable[[ToolResult], str],
) -> None:
    """Use these renderers from now on (``views.install.install_renderers`` calls this)."""
    RENDERERS.task_text, RENDERERS.task_html = task_text, task_html
    RENDERERS.result_text, RENDERERS.result_html = result_text, result_html


def text_of_task(handle: TaskHandle) -> str:
    draw = RENDERERS.task_text
    return draw(handle) if draw is not None else f"<TaskHandle {handle.tool} on {handle.server}: {handle.status}>"


def text_of_result(result: ToolResult) -> str:
    draw = RENDERERS.result_text
    return draw(result) if draw is not None else f"ToolResult(is_error={result.is_error})"


def bundle(text: str, draw_html: Callable[[Any], str] | None, item: Any) -> dict[str, str]:
    """A notebook's mime bundle: the text, and the HTML when a renderer is installed."""
    return {"text/plain": text, "text/html": draw_html(item)} if draw_html is not None else {"text/plain": text}


__all__ = ["RENDERERS", "Renderers", "bundle", "install", "text_of_result", "text_of_task"]
