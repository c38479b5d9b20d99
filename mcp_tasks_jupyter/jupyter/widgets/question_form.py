"""Where an elicitation form is drawn from: a server's question turned into form data, the
person's submission checked, the form closed (answered, or withdrawn by the server).

A :class:`Question` is one open ``elicitation/create`` request. It is shown by one or more *hosts*
(the :class:`~.task_widget.TaskWidget` of its task, or a standalone :class:`QuestionWidget`), each
keeping its own copy of the form in its ``questions`` trait. The browser sends the person's
choice as a custom message; Python is the authority on it: an answer that does not fit the
schema (:func:`~mcp_tasks_jupyter.tasks.elicitation.errors_by_field`) is refused with the errors shown
in the form, and nothing is sent. The first valid answer settles the question in every host.

The form's data (one entry of a host's ``questions`` list; every string is the server's own and is
drawn with ``textContent``)::

    {"id": "q1", "mode": "form" | "url", "message": str,
     "fields": [{"name", "label", "description", "required", "kind": "text" | "number" | "boolean"
                 | "choice" | "multi", "input": "text" | "email" | "url" | "date" | "datetime-local",
                 "integer", "minimum", "maximum", "min_length", "max_length", "pattern",
                 "options": [[value, label], ...], "control": "select" | "radio",
                 "min_items", "max_items", "default"}],        # a key is there when it applies
     "url": str | None, "href": str | None,                     # url mode; href only for http(s)
     "state": "open" | "answered" | "withdrawn", "note": str,
     "errors": {field name or "": [problem, ...]}, "attempts": int}

Messages from the browser (custom comm messages)::

    {"type": "answer", "id": "q1", "action": "accept", "content": {...}}   # form mode
    {"type": "answer", "id": "q1", "action": "accept"}                     # url mode: "I have completed this"
    {"type": "answer", "id": "q1", "action": "decline" | "cancel"}
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anywidget
import traitlets as t

from ...tasks import elicitation
from ..kernel_loop import on_kernel_loop
from . import front_end

log = logging.getLogger(__name__)

#: Choices shown as radio buttons up to this many; a select list beyond.
RADIO_MAX = 5
#: Closed questions a host keeps on show (with their note), newest last.
CLOSED_KEPT = 3
#: Characters of the answer repeated in a closed form's note.
NOTE_CHARS = 300
_FORMATS = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
_ACTIONS = ("accept", "decline", "cancel")
_ids = itertools.count(1)

OPEN, ANSWERED, WITHDRAWN = "open", "answered", "withdrawn"


# -- the server's question as form data --------------------------------------------------------


def form_spec(params: dict[str, Any]) -> dict[str, Any]:
    """What the browser needs to draw ``params`` (an ``elicitation/create`` request's params)."""
    message = params.get("message")
    spec: dict[str, Any] = {
        "mode": "form",
        "message": message if isinstance(message, str) else "",
        "fields": [],
        "url": None,
        "href": None,
    }
    if params.get("mode") == "url":
        url = params.get("url")
        url = url if isinstance(url, str) else ""
        spec.update(mode="url", url=url, href=url if _is_http(url) else None)
        return spec
    schema = params.get("requestedSchema")
    schema = schema if isinstance(schema, dict) else None
    required = set(elicitation.required(schema))
    spec["fields"] = [
        field_spec(name, prop, name in required) for name, prop in elicitation.properties(schema).items()
    ]
    return spec


def field_spec(name: str, prop: dict[str, Any], required: bool) -> dict[str, Any]:
    """One field of the form (see the module docstring for the keys)."""
    title, description = prop.get("title"), prop.get("description")
    field: dict[str, Any] = {
        "name": name,
        "label": title if isinstance(title, str) and title else name,
        "description": description if isinstance(description, str) else "",
        "required": required,
    }
    options = elicitation.choices(prop)
    multi = elicitation.multi_choices(prop)
    kind = prop.get("type")
    if options is not None:
        field.update(
            kind="choice",
            options=[[value, label] for value, label in options],
            control="radio" if len(options) <= RADIO_MAX else "select",
        )
    elif multi is not None:
        field.update(
            kind="multi",
            options=[[value, label] for value, label in multi],
            min_items=_int(prop.get("minItems")),
            max_items=_int(prop.get("maxItems")),
        )
    elif kind == "boolean":
        field["kind"] = "boolean"
    elif kind in ("number", "integer"):
        field.update(
            kind="number",
            integer=kind == "integer",
            minimum=_number(prop.get("minimum")),
            maximum=_number(prop.get("maximum")),
        )
    else:
        fmt = prop.get("format")
        pattern = prop.get("pattern")
        field.update(
            kind="text",
            input=_FORMATS.get(fmt, "text") if isinstance(fmt, str) else "text",
            min_length=_int(prop.get("minLength")),
            max_length=_int(prop.get("maxLength")),
            pattern=pattern if isinstance(pattern, str) else None,
        )
    if "default" in prop and not elicitation.field_errors(name, prop, prop["default"]):
        field["default"] = prop["default"]
    return field


def check_answer(
    params: dict[str, Any], action: Any, content: Any
) -> tuple[dict[str, Any] | None, dict[str, list[str]]]:
    """``(answer, {})`` for a submission that may be sent, else ``(None, errors by field)``.

    Only the schema's own fields are kept; every value must fit (:mod:`~mcp_tasks_jupyter.tasks.elicitation`).
    """
    if action not in _ACTIONS:
        return None, {"": [f"unknown action {action!r}"]}
    if action != "accept":
        return {"action": action}, {}
    if params.get("mode") == "url":
        return {"action": "accept"}, {}
    if not isinstance(content, dict):
        return None, {"": ["the answer must be an object of field values"]}
    schema = params.get("requestedSchema")
    schema = schema if isinstance(schema, dict) else None
    props = elicitation.properties(schema)
    kept = {name: value for name, value in content.items() if name in props}
    errors = elicitation.errors_by_field(schema, kept)
    if errors:
        return None, errors
    return {"action": "accept", "content": kept}, {}


# -- one open question and the widgets that show it -----------------------------------------------


class Question:
    """One server question on show: its form, where it is shown, and the person's answer.

    ``answer`` is a future the asking code awaits; it is resolved by the first valid submission.
    ``withdraw`` closes the form without an answer (the server dropped the request, or the task
    ended): the forms say why, and a late click is ignored.
    """

    def __init__(self, params: dict[str, Any]) -> None:
        self.id = f"q{next(_ids)}"
        self.params = params
        self.spec = {"id": self.id, **form_spec(params)}
        self.state = OPEN
        self.note = ""
        self.answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.hosts: list[Any] = []
        self._attempts: dict[int, tuple[int, dict[str, list[str]]]] = {}
        self._on_close: list[Callable[[Question], None]] = []

    @property
    def open(self) -> bool:
        return self.state == OPEN

    def show_in(self, host: Any) -> None:
        """Draw the form in ``host`` too (a widget with ``show_question``)."""
        if all(h is not host for h in self.hosts):
            self.hosts.append(host)
            host.show_question(self)

    def on_close(self, callback: Callable[[Question], None]) -> None:
        self._on_close.append(callback)

    def entry(self, host: Any) -> dict[str, Any]:
        """The form as ``host`` draws it: the spec, the state and that host's errors."""
        attempts, errors = self._attempts.get(id(host), (0, {}))
        return {
            **self.spec,
            "state": self.state,
            "note": self.note,
            "errors": errors if self.open else {},
            "attempts": attempts,
        }

    def submit(self, host: Any, message: dict[str, Any]) -> None:
        """A custom message from ``host``'s front end: check it, then settle the question or show
        the errors in that host's form. Anything once the question is closed is ignored."""
        if not self.open:
            log.debug("late answer to closed question %s ignored", self.id)
            return
        answer, errors = check_answer(self.params, message.get("action"), message.get("content"))
        if answer is None:
            attempts = self._attempts.get(id(host), (0, {}))[0] + 1
            self._attempts[id(host)] = (attempts, errors)
            host.redraw_question(self)
            return
        if not self.answer.done():
            self.answer.set_result(answer)
        self._close(ANSWERED, answered_note(answer))

    def withdraw(self, note: str) -> None:
        """Close the form unanswered, saying why (``note``); the answer future is cancelled."""
        if not self.open:
            return
        self._close(WITHDRAWN, note)
        self.answer.cancel()

    def _close(self, state: str, note: str) -> None:
        self.state, self.note = state, note
        for host in self.hosts:
            try:
                host.redraw_question(self)
            except Exception:  # a closed widget must not keep the others open
                log.exception("closing question %s in %r failed", self.id, host)
        for callback in self._on_close:
            try:
                callback(self)
            except Exception:
                log.exception("question close callback failed")
        self._on_close.clear()


def answered_note(answer: dict[str, Any]) -> str:
    """What the closed form says about the answer: ``answered: depth=3, topic="x"``, ``declined``..."""
    action = answer["action"]
    if action != "accept":
        return "declined" if action == "decline" else "dismissed (cancel)"
    content = answer.get("content") or {}
    if not content:
        return "answered"
    values = ", ".join(f"{name}={json.dumps(value, ensure_ascii=False)}" for name, value in content.items())
    return f"answered: {values}" if len(values) <= NOTE_CHARS else f"answered: {values[:NOTE_CHARS]}…"


class FormHost:
    """What a widget with a ``questions`` trait does to show forms (mixed into the widgets)."""

    _forms: list[Question]

    def show_question(self, question: Question) -> None:
        if all(q is not question for q in self._forms):
            self._forms.append(question)
        self.redraw_question(question)

    def redraw_question(self, question: Question) -> None:
        """Send this host's forms again after ``question`` changed (an answer that did not fit, the
        question closed); the oldest closed forms beyond ``CLOSED_KEPT`` are dropped."""
        if getattr(self, "comm", None) is None:
            return  # closed: nothing to draw on
        closed = [q for q in self._forms if not q.open]
        for old in closed[:-CLOSED_KEPT]:
            self._forms.remove(old)
        self.questions = [q.entry(self) for q in self._forms]

    def _on_answer_msg(self, content: dict[str, Any]) -> None:
        wanted = content.get("id")
        for question in self._forms:
            if question.id == wanted:
                question.submit(self, content)
                return
        log.debug("answer to an unknown question %r ignored", wanted)


class QuestionWidget(FormHost, anywidget.AnyWidget):
    """A question that belongs to no task (e.g. asked during an ordinary tool call), on its own."""

    _esm = front_end.esm("question")
    _css = front_end.css("question")

    #: The forms on show (see the module docstring).
    questions = t.List(t.Dict()).tag(sync=True)
    #: Which server asks.
    server = t.Unicode("").tag(sync=True)

    def __init__(self, *, server: str = "") -> None:
        self._forms = []
        super().__init__(server=server)
        self.on_msg(on_kernel_loop(self._on_front_end_msg))

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "answer":
            self._on_answer_msg(content)

    def __repr__(self) -> str:
        return f"<question from {self.server or 'a server'}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/plain"] = repr(self)
        return bundle


def _is_http(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return (
        parts.scheme.lower() in ("http", "https")
        and bool(parts.netloc)
        and url.isprintable()
        and not any(c.isspace() for c in url)
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
