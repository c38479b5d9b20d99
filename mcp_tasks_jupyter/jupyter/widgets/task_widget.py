"""TaskWidget: the live view of one task (status, progress, clocks, Cancel, result preview, and the
form of a question the task asks, see ``question_form``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...views.text import task_text
from ...views.view import view_of
from . import front_end, registry
from .live import LiveTaskView
from .question_form import FormHost, Question
from .state import TaskTraits

if TYPE_CHECKING:
    from ...tasks.handle import TaskHandle

#: Seconds between two updates of one widget, at most (the front end ticks the clocks itself).
UPDATE_INTERVAL = 0.1


class TaskWidget(LiveTaskView, FormHost, anywidget.AnyWidget):
    """A live view of a TaskHandle. Make one with :func:`bind` (or ``show_task``).

    The state is sent as data (the browser builds the DOM with ``textContent``, never HTML from the
    server); the elapsed time and the TTL count in the browser from ``started``/``created``, so a
    running task costs no messages while nothing changes. Changes of the handle are coalesced:
    at most one comm message per ``UPDATE_INTERVAL`` (the final state is sent at once).

    A question the task asks (elicitation) is drawn as a form (``questions``, sent at once, not
    coalesced); ``mcp_tasks_jupyter.jupyter.questions`` puts it there and waits for the answer.
    """

    _esm = front_end.esm("task")
    _css = front_end.css("task")

    tool = t.Unicode("").tag(sync=True)
    server = t.Unicode("").tag(sync=True)
    status = t.Unicode("working").tag(sync=True)
    status_message = t.Unicode("").tag(sync=True)
    #: ``[progress, total or None, message or None]`` or None when the server sent no progress.
    progress: t.List[Any] = t.List(default_value=None, allow_none=True).tag(sync=True)
    started = t.Float(0.0).tag(sync=True)
    finished = t.Float(None, allow_none=True).tag(sync=True)
    created = t.Float(None, allow_none=True).tag(sync=True)
    ttl_ms = t.Int(None, allow_none=True).tag(sync=True)
    poll_interval_ms = t.Int(None, allow_none=True).tag(sync=True)
    task_id = t.Unicode("").tag(sync=True)
    #: When the task should end (epoch s, from its progress and its rate), None without an estimate.
    eta = t.Float(None, allow_none=True).tag(sync=True)
    done = t.Bool(False).tag(sync=True)
    error = t.Unicode("").tag(sync=True)
    #: ``preview.result_preview`` of the result once the task completed.
    result = t.Dict(None, allow_none=True).tag(sync=True)
    logs = t.List(t.Unicode()).tag(sync=True)
    log_count = t.Int(0).tag(sync=True)
    pending = t.List(t.Unicode()).tag(sync=True)
    cancelling = t.Bool(False).tag(sync=True)
    cancel_error = t.Unicode("").tag(sync=True)
    #: The question forms on show (open ones and the last few closed ones; see ``question_form``).
    questions = t.List(t.Dict()).tag(sync=True)
    #: The kernel's clock (epoch s) when this state was sent: the browser corrects its own by it.
    sent_at = t.Float(0.0).tag(sync=True)

    def __init__(self, handle: TaskHandle, *, interval: float = UPDATE_INTERVAL) -> None:
        self._handle = handle
        self._state = TaskTraits(handle)
        self._live_init(interval)
        self._forms: list[Question] = []
        #: True once shown in an output (the question router looks for displayed widgets).
        self.displayed = False
        super().__init__(**self._current_state(), sent_at=time.time())
        self._follow(handle)
        if not handle.done():
            registry.register(handle, self)

    def __repr__(self) -> str:
        return f"TaskWidget({task_text(view_of(self._handle))})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        self.displayed = True
        return super()._repr_mimebundle_(**kwargs)

    def _on_other_msg(self, content: dict[str, Any]) -> None:
        # A question form sends {"type": "answer", "id": ..., "action": ..., "content": ...}.
        if content.get("type") == "answer":
            self._on_answer_msg(content)

    # -- following the handle --------------------------------------------------------------------

    def _stop_following(self) -> None:
        registry.unregister(self._handle, self)
        super()._stop_following()

    def _current_state(self) -> dict[str, Any]:
        state = self._state.traits()
        cancelling = self._cancelling and not state["done"]
        state["cancelling"], state["cancel_error"] = cancelling, self._cancel_error
        return state


def bind(handle: TaskHandle, *, interval: float = UPDATE_INTERVAL) -> TaskWidget:
    """A TaskWidget following ``handle`` until it ends: at most one comm message per ``interval``
    seconds however fast the handle changes, the final state at once, then it unsubscribes."""
    return TaskWidget(handle, interval=interval)
