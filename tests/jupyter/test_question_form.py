"""A task's question becomes a form in its widget; the person's answer goes back to the server.

Plain asyncio (no kernel): a real demo server over stdio, real TaskHandles from a Runtime whose
question handler is a QuestionRouter. The form is answered exactly as the browser would: a custom
comm message from the front end, handled by ipywidgets' own message path.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
from collections.abc import AsyncIterator
from html import escape
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.jupyter import questions
from mcp_tasks_jupyter.jupyter.questions import WITHDRAWN_NOTE, QuestionRouter
from mcp_tasks_jupyter.jupyter.runtime import Runtime
from mcp_tasks_jupyter.jupyter.widgets import TaskWidget, bind, registry
from mcp_tasks_jupyter.jupyter.widgets.question_form import QuestionWidget, check_answer, form_spec
from mcp_tasks_jupyter.jupyter.widgets.state import board_row
from mcp_tasks_jupyter.protocol.jsonrpc import Notification, Request
from mcp_tasks_jupyter.protocol.task_state import TaskState
from mcp_tasks_jupyter.tasks.control import control_of
from mcp_tasks_jupyter.views.html import task_html
from mcp_tasks_jupyter.views.view import view_of
from tests.support import demo_stdio_argv, eventually
from tests.support.paths import REPO_ROOT

from .conftest import DIALECT, HOSTILE, WAIT

pytestmark = pytest.mark.anyio

WIDGETS = Path(mtj.__file__).parent / "jupyter" / "widgets"
WIDGET_SOURCES = REPO_ROOT / "labextension" / "src" / "widgets"
AMBIGUOUS = {"topic": "tides", "ambiguous": True, "stage_seconds": 0.05}


class Sent:
    """Every JSON-RPC response the client sends (answers to the server's requests)."""

    def __init__(self, client: mtj.Client) -> None:
        self.responses: list[dict[str, Any]] = []
        transport = client.transport
        send = transport.send

        async def recording_send(message: dict[str, Any], headers: Any = None) -> None:
            if "method" not in message:
                self.responses.append(message)
            await send(message, headers)

        transport.send = recording_send  # type: ignore[method-assign]

    def to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.responses if m.get("id") == request_id]


class Notebook:
    """A runtime with the notebook's question router, on a demo server; ``shown`` holds what the
    router displayed (there is no kernel to display into)."""

    def __init__(self, runtime: Runtime, router: QuestionRouter, shown: list[Any], client: mtj.Client) -> None:
        self.runtime, self.router, self.shown, self.client = runtime, router, shown, client
        self.sent = Sent(client)

    async def settled(self) -> None:
        """A ping's round trip to the server: what the client had to send by now (an answer) has gone
        before it on the one pipe. A test that asserts nothing was sent waits for this, not for a time."""
        for _ in range(3):  # an answer's chain of callbacks runs in the passes the round trips take
            await self.client.session.request("ping", {})

    async def research(self, **arguments: Any) -> mtj.TaskHandle:
        return await self.runtime.start_task("demo", "research", {**AMBIGUOUS, **arguments})


@contextlib.asynccontextmanager
async def notebook(
    *server_args: str, dialect: tuple[str, ...] = DIALECT, front_end: bool = True
) -> AsyncIterator[Notebook]:
    runtime = Runtime()
    shown: list[Any] = []
    router = QuestionRouter(display=shown.append if front_end else None)
    runtime.question_handler = router
    try:
        client = await runtime.connect("demo", demo_stdio_argv(*dialect, "--poll-interval", "100", *server_args))
        yield Notebook(runtime, router, shown, client)
    finally:
        await runtime.aclose()


@pytest.fixture
async def nb() -> AsyncIterator[Notebook]:
    async with notebook() as value:
        yield value


def shown_widget(handle: mtj.TaskHandle) -> TaskWidget:
    """``bind`` plus what displaying it in an output does."""
    widget = bind(handle)
    widget._repr_mimebundle_()
    return widget


def send_from_browser(widget: Any, **content: Any) -> None:
    """What the form's buttons do: a custom comm message, handled as ipywidgets handles one."""
    widget._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


def answer(widget: Any, action: str = "accept", content: Any = None, *, question: int = -1) -> None:
    message: dict[str, Any] = {"type": "answer", "id": widget.questions[question]["id"], "action": action}
    if content is not None:
        message["content"] = content
    send_from_browser(widget, **message)


async def open_form(widget: Any, count: int = 1) -> dict[str, Any]:
    await eventually(
        lambda: sum(q["state"] == "open" for q in widget.questions) >= count,
        timeout=WAIT,
        what="the question form",
    )
    return [q for q in widget.questions if q["state"] == "open"][-1]


def pending_request(handle: mtj.TaskHandle) -> tuple[Any, dict[str, Any]]:
    """The JSON-RPC id and params of the question the task waits on."""
    ((request_id, request),) = handle.pending_input.items()
    return request_id, request["params"]


# -- the form ------------------------------------------------------------------------------------


async def test_the_form_has_the_fields_of_the_demo_question(nb):
    task = await nb.research()
    widget = shown_widget(task)
    form = await open_form(widget)
    request_id, params = pending_request(task)
    assert form["mode"] == "form" and form["message"] == params["message"] and "tides" in form["message"]
    interpretation, depth = form["fields"]
    assert interpretation == {
        "name": "interpretation",
        "label": "Interpretation",
        "kind": "choice",
        "control": "radio",
        "required": True,
        "description": "Which reading of 'tides' should the research follow?",
        "options": [
            ["tides (history)", "The history of tides"],
            ["tides (technology)", "tides as a technology"],
            ["tides (economics)", "The economics of tides"],
        ],
    }
    assert depth == {
        "name": "depth",
        "label": "Depth",
        "kind": "number",
        "integer": True,
        "minimum": 1,
        "maximum": 5,
        "default": 2,
        "required": False,
        "description": "How deep to dig: 1 = skim, 5 = thorough.",
    }
    assert (form["state"], form["errors"], form["attempts"], form["note"]) == ("open", {}, 0, "")
    json.dumps(widget.questions)  # plain JSON for the comm
    # keyed by the JSON-RPC request id (and a hash of the params)
    assert [key[1] for key in nb.router.open] == [request_id] and isinstance(request_id, (int, str))
    await eventually(
        lambda: widget.status == "input_required" and widget.pending == [form["message"]],
        timeout=WAIT,
        what="the task waiting",
    )
    assert nb.shown == []  # it was on show already: nothing else displayed
    # the board and the saved summary say that the task waits for input
    assert "input" in board_row(0, task)["message"]
    said = task.status_message
    control_of(task).apply(
        TaskState(task.task_id, task.status, None, ttl_ms=task.ttl_ms)
    )  # a server that says nothing itself
    assert board_row(0, task)["message"] == f"waiting for input: {form['message']}"
    control_of(task).apply(TaskState(task.task_id, task.status, said, ttl_ms=task.ttl_ms))
    assert f"waiting for input: {escape(form['message'])}" in task_html(view_of(task))
    await task.cancel()


async def test_answered_through_the_form(nb):
    task = await nb.research()
    widget = shown_widget(task)
    form = await open_form(widget)
    request_id, _ = pending_request(task)
    answer(widget, content={"interpretation": "tides (economics)", "depth": 4})
    assert widget.questions[-1]["state"] == "answered"
    assert widget.questions[-1]["note"] == 'answered: interpretation="tides (economics)", depth=4'
    result = await asyncio.wait_for(task, WAIT)
    assert "**Interpretation:** tides (economics)" in result.text and "**Depth:** 4" in result.text
    assert result.structured["interpretation"] == "tides (economics)" and result.structured["depth"] == 4
    assert task.answered == [(form["message"], "person", "accept")]
    assert [m["result"] for m in nb.sent.to(request_id)] == [
        {"action": "accept", "content": {"interpretation": "tides (economics)", "depth": 4}}
    ]
    answer(widget, "decline")  # a late click on the closed form is ignored
    await nb.settled()
    assert len(nb.sent.to(request_id)) == 1 and widget.questions[-1]["state"] == "answered"
    assert nb.router.open == {}


@pytest.mark.parametrize(
    "action, word, note", [("decline", "declined", "declined"), ("cancel", "cancelled", "dismissed (cancel)")]
)
async def test_declined_or_dismissed_through_the_form(nb, action, word, note):
    task = await nb.research()
    widget = shown_widget(task)
    await open_form(widget)
    request_id, _ = pending_request(task)
    answer(widget, action, content={"interpretation": "ignored"})
    result = await asyncio.wait_for(task, WAIT)
    assert result.is_error and f"({word})" in result.text
    assert [m["result"] for m in nb.sent.to(request_id)] == [{"action": action}]  # no content with it
    assert (widget.questions[-1]["state"], widget.questions[-1]["note"]) == ("answered", note)


async def test_an_invalid_answer_is_refused_with_errors_and_nothing_is_sent(nb):
    task = await nb.research()
    widget = shown_widget(task)
    await open_form(widget)
    request_id, _ = pending_request(task)
    answer(widget, content={"interpretation": "tides (economics)", "depth": 9})
    form = widget.questions[-1]
    assert form["state"] == "open" and form["attempts"] == 1
    assert form["errors"] == {"depth": ["must be at most 5"]}
    answer(widget, content={"depth": "deep", "unknown": 1})
    form = widget.questions[-1]
    assert form["attempts"] == 2 and form["errors"] == {
        "interpretation": ["Interpretation is required"],  # the field named (issue 30)
        "depth": ["must be an integer"],
    }
    answer(widget, content={"interpretation": "tides (geology)", "depth": 2.5})
    errors = widget.questions[-1]["errors"]
    assert errors["interpretation"][0].startswith("'tides (geology)' is not one of") and errors["depth"]
    answer(widget, content=["not", "an", "object"])
    assert widget.questions[-1]["errors"] == {"": ["the answer must be an object of field values"]}
    answer(widget, "shrug")
    assert widget.questions[-1]["errors"] == {"": ["unknown action 'shrug'"]}
    await nb.settled()
    assert nb.sent.to(request_id) == [] and task.answered == [] and task.status == "input_required"
    # then a valid one is accepted (an unknown field is left out, not sent)
    answer(widget, content={"interpretation": "tides (history)", "depth": 1, "unknown": "x"})
    form = widget.questions[-1]
    assert form["state"] == "answered" and form["errors"] == {}
    result = await asyncio.wait_for(task, WAIT)
    assert result.structured["interpretation"] == "tides (history)" and result.structured["depth"] == 1
    assert [m["result"]["content"] for m in nb.sent.to(request_id)] == [
        {"interpretation": "tides (history)", "depth": 1}
    ]


async def test_errors_stay_in_the_widget_that_sent_them(nb):
    task = await nb.research()
    first, second = shown_widget(task), shown_widget(task)
    await open_form(first)
    await open_form(second)
    assert first.questions[-1]["id"] == second.questions[-1]["id"]  # one question, two views
    answer(first, content={"depth": 0})
    assert first.questions[-1]["errors"] and second.questions[-1]["errors"] == {}
    answer(second, content={"interpretation": "tides (technology)"})
    assert first.questions[-1]["state"] == second.questions[-1]["state"] == "answered"
    result = await asyncio.wait_for(task, WAIT)
    assert result.structured["interpretation"] == "tides (technology)" and result.structured["depth"] == 2


# -- withdrawal ------------------------------------------------------------------------------------


async def test_cancelling_the_task_closes_the_form_and_answers_with_an_error_not_an_accept(nb):
    task = await nb.research()
    widget = shown_widget(task)
    await open_form(widget)
    request_id, _ = pending_request(task)
    await task.cancel()
    with pytest.raises(mtj.TaskCancelled):
        await asyncio.wait_for(task, WAIT)
    form = widget.questions[-1]
    assert (
        form["state"] == "withdrawn" and form["note"] == "the task was cancelled before this question was answered"
    )
    answer(widget, content={"interpretation": "tides (history)"})  # a late click
    # The server hears that the question went stale, never an answer to it (sent on the loop: waited for).
    await eventually(lambda: bool(nb.sent.to(request_id)), timeout=WAIT, what="the reply to the stale question")
    await asyncio.sleep(0.3)  # and nothing after it: a late click's answer would come within this
    [reply] = nb.sent.to(request_id)
    assert "result" not in reply and "has already ended (cancelled)" in reply["error"]["message"]
    assert task.answered == [] and widget.questions[-1]["state"] == "withdrawn"
    assert nb.router.open == {} and task.pending_input == {}
    assert registry.live(task) == []  # a finished task's widgets leave the registry


async def test_a_request_the_server_withdraws_closes_its_form(nb):
    task = await nb.research()
    widget = shown_widget(task)
    await open_form(widget)
    request_id, _ = pending_request(task)
    # what the session does with notifications/cancelled from the server
    nb.client.session.message_received(
        Notification("notifications/cancelled", {"requestId": request_id, "reason": "no longer needed"})
    )
    await eventually(lambda: widget.questions[-1]["state"] == "withdrawn", timeout=WAIT, what="the closed form")
    assert widget.questions[-1]["note"] == WITHDRAWN_NOTE
    answer(widget, content={"interpretation": "tides (history)"})
    await nb.settled()
    assert nb.sent.to(request_id) == [] and task.answered == [] and nb.router.open == {}
    assert task.pending_input == {} and not task.done()
    await task.cancel()
    with pytest.raises(mtj.TaskCancelled):
        await asyncio.wait_for(task, WAIT)


# -- never twice -------------------------------------------------------------------------------------


async def test_the_same_request_is_never_shown_twice(nb):
    task = await nb.research()
    widget = shown_widget(task)
    form = await open_form(widget)
    request_id, params = pending_request(task)
    # The same request arrives again (as a replayed stream would deliver it): it is answered once.
    nb.client.session.message_received(Request(request_id, "elicitation/create", copy.deepcopy(params)))
    await nb.settled()
    assert [q["id"] for q in widget.questions] == [form["id"]] and nb.shown == []
    assert len(nb.router.open) == 1
    answer(widget, content={"interpretation": "tides (technology)", "depth": 3})
    result = await asyncio.wait_for(task, WAIT)
    assert result.structured["interpretation"] == "tides (technology)"
    # one reply for the two deliveries
    await eventually(lambda: len(nb.sent.to(request_id)) == 1, timeout=WAIT, what="the reply")
    await nb.settled()
    assert [m["result"] for m in nb.sent.to(request_id)] == [
        {"action": "accept", "content": {"interpretation": "tides (technology)", "depth": 3}}
    ]
    assert [q["id"] for q in widget.questions] == [form["id"]] and task.answered[0][2] == "accept"


async def ask_as_the_client(nb: Notebook, task: mtj.TaskHandle, key: Any, params: dict[str, Any]) -> Any:
    """What the client does with a server request: file it as pending under its id, ask, unfile."""
    task.pending_input[key] = {"method": "elicitation/create", "params": params}
    try:
        return await nb.router(task, params)
    finally:
        if task.pending_input.get(key, {}).get("params") is params:
            del task.pending_input[key]


async def test_repeats_join_the_open_form_and_later_ones_get_the_same_answer(nb):
    task = await nb.research(stage_seconds=5)  # long stages: the task is still running afterwards
    widget = shown_widget(task)
    await open_form(widget)
    request_id, params = pending_request(task)
    repeat = asyncio.ensure_future(ask_as_the_client(nb, task, request_id, params))  # the same key
    again = asyncio.ensure_future(ask_as_the_client(nb, task, "other-id", {**params, "_meta": {"x": 1}}))
    await asyncio.sleep(0.1)
    assert len(widget.questions) == 1 and len(nb.router.open) == 2  # two keys, one form
    answer(widget, content={"interpretation": "tides (history)"})
    expected = {"action": "accept", "content": {"interpretation": "tides (history)"}}
    assert await asyncio.wait_for(repeat, WAIT) == expected
    assert await asyncio.wait_for(again, WAIT) == expected
    await eventually(lambda: len(nb.sent.to(request_id)) == 1, timeout=WAIT, what="the server's answer")
    # the same requests once more: remembered, no new form
    assert await asyncio.wait_for(ask_as_the_client(nb, task, request_id, copy.deepcopy(params)), WAIT) == expected
    assert await asyncio.wait_for(ask_as_the_client(nb, task, "other-id", dict(params)), WAIT) == expected
    assert len(widget.questions) == 1 and nb.router.open == {}
    # another question is another form
    different = asyncio.ensure_future(ask_as_the_client(nb, task, "third", {**params, "message": "and now?"}))
    form = await open_form(widget)
    assert form["message"] == "and now?" and len(widget.questions) == 2
    different.cancel()  # the server withdrew it
    await eventually(lambda: widget.questions[-1]["state"] == "withdrawn", timeout=WAIT, what="closed")
    assert widget.questions[-1]["note"] == WITHDRAWN_NOTE
    await task.cancel()


# -- where the form is shown ---------------------------------------------------------------------------


async def test_a_task_with_no_widget_on_show_gets_one_displayed(nb):
    task = await nb.research()  # started from plain code: nothing displayed
    await eventually(lambda: bool(nb.shown), timeout=WAIT, what="a displayed widget")
    (widget,) = nb.shown
    assert isinstance(widget, TaskWidget) and widget.handle is task and widget.displayed is False
    form = await open_form(widget)
    assert form["fields"][0]["name"] == "interpretation"
    answer(widget, content={"interpretation": "tides (economics)"})
    assert (await asyncio.wait_for(task, WAIT)).structured["interpretation"] == "tides (economics)"


async def test_a_widget_made_but_not_displayed_is_displayed_for_the_question(nb):
    task = await nb.research()
    hidden = bind(task)
    closed = shown_widget(task)
    closed.close()  # a closed view is never used
    await eventually(lambda: bool(nb.shown), timeout=WAIT, what="a displayed widget")
    assert nb.shown == [hidden] and closed.questions == []
    await open_form(hidden)
    answer(hidden, content={"interpretation": "tides (history)"})
    assert (await asyncio.wait_for(task, WAIT)).structured["interpretation"] == "tides (history)"


async def test_without_a_front_end_the_question_is_declined_at_once():
    async with notebook(front_end=False) as nb:
        task = await nb.research()
        result = await asyncio.wait_for(task, WAIT)
        assert result.is_error and "declined" in result.text and nb.shown == []


async def test_a_question_of_no_task_gets_a_form_of_its_own(nb):
    params = {
        "message": "Which colour?",
        "requestedSchema": {
            "type": "object",
            "properties": {"colour": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]}},
            "required": ["colour"],
        },
    }
    asking = asyncio.ensure_future(nb.router(None, params))
    await eventually(lambda: bool(nb.shown), timeout=WAIT, what="a displayed question")
    (widget,) = nb.shown
    assert isinstance(widget, QuestionWidget)
    form = await open_form(widget)
    assert form["fields"][0]["options"] == [["red", "Red"], ["green", "Green"]]
    answer(widget, content={"colour": "blue"})
    assert widget.questions[-1]["errors"] == {"colour": ["'blue' is not one of ['red', 'green']"]}
    answer(widget, content={"colour": "green"})
    assert await asyncio.wait_for(asking, WAIT) == {"action": "accept", "content": {"colour": "green"}}


async def test_url_mode_waits_for_the_persons_confirmation(nb):
    task = await nb.runtime.start_task("demo", "slow_compute", {"seconds": 30, "steps": 1})
    widget = shown_widget(task)
    params = {
        "mode": "url",
        "message": "Sign in to continue",
        "url": "https://example.org/login?x=1",
        "elicitationId": "e-1",
    }
    asking = asyncio.ensure_future(nb.router(task, params))
    form = await open_form(widget)
    assert (form["mode"], form["url"], form["href"], form["fields"]) == (
        "url",
        "https://example.org/login?x=1",
        "https://example.org/login?x=1",
        [],
    )
    answer(widget)  # "I have completed this"
    assert await asyncio.wait_for(asking, WAIT) == {"action": "accept"}
    declined = asyncio.ensure_future(nb.router(task, {**params, "elicitationId": "e-2"}))
    await open_form(widget)
    answer(widget, "decline")
    assert await asyncio.wait_for(declined, WAIT) == {"action": "decline"}
    await task.cancel()


# -- hostile servers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("hostile", HOSTILE)
async def test_hostile_text_from_the_server_stays_text(nb, hostile):
    task = await nb.research(topic=hostile)
    widget = shown_widget(task)
    form = await open_form(widget)
    # sent as data, verbatim: the front end sets it with textContent
    assert hostile in form["message"] and hostile in form["fields"][0]["description"]
    assert form["fields"][0]["options"][0] == [f"{hostile} (history)", f"The history of {hostile}"]
    html = task_html(view_of(task))  # the static view escapes it
    assert hostile not in html and escape(hostile) in html
    answer(widget, content={"interpretation": f"{hostile} (economics)"})
    result = await asyncio.wait_for(task, WAIT)
    assert result.structured["interpretation"] == f"{hostile} (economics)"


def test_hostile_schemas_and_links_are_data_only():
    evil = HOSTILE[1]
    spec = form_spec(
        {
            "message": evil,
            "requestedSchema": {
                "type": "object",
                "required": [evil],
                "properties": {
                    evil: {
                        "type": "string",
                        "title": evil,
                        "description": evil,
                        "default": evil,
                        "pattern": "^.+$",
                    },
                    "pick": {"type": "string", "enum": [evil, "b"], "enumNames": [evil, HOSTILE[2]]},
                    "many": {"type": "array", "items": {"anyOf": [{"const": evil, "title": evil}]}, "maxItems": 1},
                },
            },
        }
    )
    text, pick, many = spec["fields"]
    assert (text["name"], text["label"], text["description"], text["default"]) == (evil, evil, evil, evil)
    assert text["required"] and pick["options"] == [[evil, evil], ["b", HOSTILE[2]]]
    assert many["kind"] == "multi" and many["options"] == [[evil, evil]] and many["max_items"] == 1
    for url in [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "https://",
        "http://a b",
        "HTTPS://ok.example/\u0000",
    ]:
        assert form_spec({"mode": "url", "message": "m", "url": url})["href"] is None, url
    assert (
        form_spec({"mode": "url", "message": "m", "url": "HTTPS://Example.org/a"})["href"]
        == "HTTPS://Example.org/a"
    )
    # the front end never builds HTML from strings: neither its sources nor the bundles built from them
    bundles = [WIDGETS / "static" / "task.js", WIDGETS / "static" / "question.js"]
    for path in [*WIDGET_SOURCES.glob("*.ts"), *bundles]:
        code = re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M)  # without comments
        assert not re.search(
            r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function", code
        ), path


def test_each_kind_of_field():
    schema = {
        "type": "object",
        "required": ["email", "ok"],
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 40},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date", "default": "2026-01-31"},
            "when": {"type": "string", "format": "date-time"},
            "name": {
                "type": "string",
                "minLength": 2,
                "maxLength": 8,
                "default": "x",
            },  # an invalid default is dropped
            "ratio": {"type": "number", "minimum": 0, "maximum": 1.5},
            "ok": {"type": "boolean", "default": True},
            "size": {"type": "string", "enum": list("abcdef")},
            "tags": {
                "type": "array",
                "items": {"enum": ["x", "y"]},
                "minItems": 1,
                "maxItems": 2,
                "default": ["x"],
            },
        },
    }
    fields = {f["name"]: f for f in form_spec({"message": "m", "requestedSchema": schema})["fields"]}
    assert [fields[n]["input"] for n in ["email", "site", "day", "when", "name"]] == [
        "email",
        "url",
        "date",
        "datetime-local",
        "text",
    ]
    assert fields["email"]["required"] and fields["email"]["max_length"] == 40
    assert fields["day"]["default"] == "2026-01-31" and "default" not in fields["name"]
    assert (fields["name"]["min_length"], fields["name"]["max_length"]) == (2, 8)
    assert fields["ratio"] == {
        "name": "ratio",
        "label": "ratio",
        "description": "",
        "required": False,
        "kind": "number",
        "integer": False,
        "minimum": 0,
        "maximum": 1.5,
    }
    assert fields["ok"]["kind"] == "boolean" and fields["ok"]["default"] is True and fields["ok"]["required"]
    assert fields["size"]["control"] == "select" and len(fields["size"]["options"]) == 6
    assert (fields["tags"]["kind"], fields["tags"]["min_items"], fields["tags"]["default"]) == ("multi", 1, ["x"])
    params = {"message": "m", "requestedSchema": schema}
    good = {"email": "a@b.org", "ok": False, "when": "2026-01-31T10:00:00.000Z", "tags": ["x", "y"], "ratio": 1}
    assert check_answer(params, "accept", good) == ({"action": "accept", "content": good}, {})
    _, errors = check_answer(params, "accept", {"email": "nope", "when": "soon", "tags": [], "ratio": 2})
    assert errors == {
        "ok": ["ok is required"],  # no title: its name
        "email": ["is not a valid email"],
        "when": ["is not a valid date-time"],
        "tags": ["choose at least 1"],
        "ratio": ["must be at most 1.5"],
    }


# -- installing ------------------------------------------------------------------------------------------


def test_install_sets_the_runtime_handler_once_and_keeps_a_users_own(monkeypatch):
    runtime = Runtime()
    monkeypatch.setattr("mcp_tasks_jupyter.jupyter.runtime._runtime", runtime)
    router = questions.install(None)
    assert isinstance(router, QuestionRouter) and runtime.question_handler is router
    assert router.display is None  # no kernel: questions are declined, never left waiting
    assert questions.install(None) is router

    async def mine(handle: Any, params: Any) -> dict[str, Any]:
        return {"action": "decline"}

    runtime.question_handler = mine
    assert questions.install(None) is None and runtime.question_handler is mine


# -- the default dialect ---------------------------------------------------------------------------------


async def test_the_form_over_the_default_dialect():
    async with notebook(dialect=()) as nb:
        task = await nb.research()
        widget = shown_widget(task)
        await open_form(widget)
        answer(widget, content={"interpretation": "tides (economics)", "depth": 5})
        result = await asyncio.wait_for(task, WAIT)
    assert result.structured["interpretation"] == "tides (economics)" and result.structured["depth"] == 5
