"""Questions from tasks, answered by a person in the notebook: the runtime's question handler.

``%load_ext mcp_tasks_jupyter`` installs a :class:`QuestionRouter` as
``get_runtime().question_handler``. When a task asks (``elicitation/create``) and no preset answer
fits, the router shows the question as a form in the task's live widget (or displays one, in the
output of the cell that ran last, when the task has none on show), and waits for the person's
answer on an asyncio future that the widget's custom message resolves: no thread, the loop stays
free, other tasks keep running.

* The same request is never shown twice. A question is keyed by its task, its JSON-RPC request id
  (or input request key) and a hash of its params; the same key again waits on the form already
  open, and an answered key gets the same answer again without a form. An identical question on
  the same task under a new id joins the open form: one answer settles both.
* A request the server has dropped closes its form instead of sending a stale answer. The client
  cancels the handler when the server sends ``notifications/cancelled`` or the task ends; the
  form then closes, saying "the server withdrew this question" (or how the task ended), and a
  late click does nothing. A task seen ending closes its forms at once.
* With no front end to show a form on (no kernel: a terminal IPython), the question is declined
  at once rather than left waiting.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from ..protocol.task_state import TERMINAL
from ..tasks.handle import TaskHandle
from .widgets import registry
from .widgets.question_form import Question, QuestionWidget
from .widgets.task_widget import TaskWidget

log = logging.getLogger(__name__)

#: Answered questions remembered (so a repeated request gets the same answer, not a new form).
ANSWERS_KEPT = 256
WITHDRAWN_NOTE = "the server withdrew this question"

Display = Callable[[Any], None]
Key = tuple[Any, Any, str]


class QuestionRouter:
    """``async (handle_or_None, params) -> answer``: the form in the task's widget, then the answer.

    ``display(widget)`` puts a widget in an output when the task has none on show; None means
    there is no front end here, and questions are declined at once.
    """

    def __init__(self, display: Display | None = None) -> None:
        self.display = display
        #: Open questions by key (several keys may share one question).
        self.open: dict[Key, Question] = {}
        self._answered: collections.OrderedDict[Key, dict[str, Any]] = collections.OrderedDict()
        self._waiters: dict[Question, int] = {}

    async def __call__(self, handle: TaskHandle | None, params: dict[str, Any]) -> dict[str, Any]:
        if handle is not None and handle.done():
            return {"action": "decline"}  # a question of a finished task: nothing to show it on
        digest = params_digest(params)
        key: Key = (_task_key(handle), request_key(handle, params), digest)
        if key in self._answered:
            return dict(self._answered[key])
        question = self.open.get(key) or self._same_question(handle, digest)
        if question is None:
            question = self._ask(handle, params)
            if question is None:
                log.warning(
                    "a question from %s was declined: no notebook front end to show it on",
                    handle.server if handle is not None else "a server",
                )
                return {"action": "decline"}
        self.open[key] = question
        self._waiters[question] = self._waiters.get(question, 0) + 1
        try:
            answer = await asyncio.shield(question.answer)
        except asyncio.CancelledError:
            self._leave(question, key, handle)
            raise
        self._remember(key, answer)
        self._waiters.pop(question, None)
        return dict(answer)

    # -- showing -------------------------------------------------------------------------------

    def _ask(self, handle: TaskHandle | None, params: dict[str, Any]) -> Question | None:
        hosts = self._hosts(handle)
        if not hosts:
            return None
        question = Question(params)
        question.on_close(self._closed)
        for host in hosts:
            question.show_in(host)
        if handle is not None:
            unsubscribe = handle.on_change(lambda h: self._task_changed(h, question))
            question.on_close(lambda _q: unsubscribe())
            self._task_changed(handle, question)
        return question

    def _hosts(self, handle: TaskHandle | None) -> list[Any]:
        """The displayed widgets of ``handle``; else one displayed now (None: no front end)."""
        if handle is not None:
            shown = registry.displayed(handle)
            if shown:
                return shown
        if self.display is None:
            return []
        if handle is not None:
            existing = registry.live(handle)
            widget: Any = existing[0] if existing else TaskWidget(handle)
        else:
            widget = QuestionWidget()
        try:
            self.display(widget)
        except Exception:  # nowhere to draw it: the question is declined rather than left waiting
            log.exception("could not display a question form")
            return []
        return [widget]

    def _same_question(self, handle: TaskHandle | None, digest: str) -> Question | None:
        """An open question of the same task with the same params (asked again under a new id)."""
        if handle is None:
            return None
        for (task, _request, other), question in self.open.items():
            if task == _task_key(handle) and other == digest and question.open:
                return question
        return None

    # -- closing -------------------------------------------------------------------------------

    def _task_changed(self, handle: TaskHandle, question: Question) -> None:
        if question.open and (handle.done() or handle.server_status in TERMINAL):
            question.withdraw(ended_note(handle))

    def _leave(self, question: Question, key: Key, handle: TaskHandle | None) -> None:
        """A waiter was cancelled (the request was withdrawn): close the form if it was the last."""
        left = self._waiters.get(question, 1) - 1
        self.open.pop(key, None)
        if left > 0 and question.open:
            self._waiters[question] = left
            return
        self._waiters.pop(question, None)
        if question.open:
            ended = handle is not None and (handle.done() or handle.server_status in TERMINAL)
            question.withdraw(ended_note(handle) if ended and handle is not None else WITHDRAWN_NOTE)

    def _closed(self, question: Question) -> None:
        for key in [k for k, q in self.open.items() if q is question]:
            del self.open[key]
            if question.answer.done() and not question.answer.cancelled():
                self._remember(key, question.answer.result())

    def _remember(self, key: Key, answer: dict[str, Any]) -> None:
        if key[1] is None:
            return  # no request id: the same words later may be a new question
        self._answered[key] = answer
        self._answered.move_to_end(key)
        while len(self._answered) > ANSWERS_KEPT:
            self._answered.popitem(last=False)


def ended_note(handle: TaskHandle) -> str:
    """Why a task's form closed unanswered, from its final status."""
    status = handle.status
    verb = {
        "cancelled": "was cancelled",
        "completed": "completed",
        "failed": "failed",
        "expired": "expired",
        "lost": "was lost",
        "error": "ended with a tool error",
        "declined": "ended after a declined question",
    }.get(status, f"ended ({status})")
    return f"the task {verb} before this question was answered"


def params_digest(params: dict[str, Any]) -> str:
    """A hash of what a question asks (its params without ``_meta``)."""
    body = {k: v for k, v in params.items() if k != "_meta"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def request_key(handle: TaskHandle | None, params: dict[str, Any]) -> Any:
    """The request id (or input request key) the client filed ``params`` under while it waits,
    found in ``handle.pending_input``; None when it cannot be told."""
    if handle is None:
        return None
    for key, request in list(handle.pending_input.items()):
        if isinstance(request, dict) and request.get("params") is params:
            return key
    return None


def _task_key(handle: TaskHandle | None) -> Any:
    if handle is None:
        return None
    return (handle.server, handle.task_id or id(handle))


# -- in a kernel ------------------------------------------------------------------------------


def notebook_display(shell: Any) -> Display | None:
    """How to show a widget from a background job: in the output of the cell that ran last (the
    one running now, or the one the person looked at last), not in the cell that started the job.
    None without a kernel (nothing could draw a widget)."""
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    last: dict[str, Any] = {}

    def remember(*_: Any) -> None:
        parent = shell.get_parent() if hasattr(shell, "get_parent") else None
        if parent:
            last["parent"] = parent

    remember()  # the cell loading the extension, until another one runs
    shell.events.register("pre_run_cell", remember)

    def display(widget: Any) -> None:
        from IPython.display import display as show

        parent = last.get("parent")
        tokens = None
        if parent is not None and hasattr(shell, "set_thread_parent"):
            tokens = shell.set_thread_parent(parent)
        try:
            show(widget)
        finally:
            if tokens is not None and hasattr(shell, "reset_thread_parent"):
                shell.reset_thread_parent(tokens)

    return display


def install(shell: Any) -> QuestionRouter | None:
    """Make the notebook's form answer the runtime's questions (``%load_ext`` calls this).

    A question handler someone set before is kept; loading again keeps the router installed.
    """
    from .runtime import get_runtime

    runtime = get_runtime()
    current = runtime.question_handler
    if isinstance(current, QuestionRouter):
        return current
    if current is not None:
        return None
    router = QuestionRouter(notebook_display(shell))
    runtime.question_handler = router
    return router


__all__ = ["WITHDRAWN_NOTE", "QuestionRouter", "ended_note", "install", "params_digest", "request_key"]
