"""Who answers a server's question, in one order for every dialect and wire.

An elicitation is answered by the ``elicitation_handler`` given to ``connect``; else by the task's
preset ``answers`` when they fit the question's schema; else by a person (``ask_user``: the notebook's
form); else it is declined. Sampling goes to the ``sampling_handler`` or is refused. The dialect decides
which task a question belongs to (and refuses questions of tasks that ended or that this client does not
know) before it reaches this module; questions of a finished task are refused here too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import InvalidMessage
from ..protocol.jsonrpc import INVALID_PARAMS
from ..protocol.task_state import tag_question
from ..protocol.types import CreateMessageRequestParams, ElicitRequestParams
from ..session.server_requests import HandlerError
from ..session.session import Session
from ..tasks import elicitation
from ..tasks.control import control_of
from ..tasks.handle import TaskHandle
from .lifecycle import ended_reason

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
SAMPLING_QUESTION = "the server asked for a model (sampling)"


class Answerer:
    """The one answering path of a connection."""

    def __init__(
        self, session: Session, *, elicitation_handler: Handler | None, sampling_handler: Handler | None
    ) -> None:
        self.session = session
        self.elicitation_handler = elicitation_handler
        self.sampling_handler = sampling_handler
        #: Asks a person when neither the handler nor a task's answers settle a question (the
        #: notebook runtime sets it to show a form); same signature as an elicitation handler.
        self.ask_user: Handler | None = None

    @property
    def server(self) -> str:
        return self.session.name

    async def elicit(self, params: dict[str, Any], handle: TaskHandle | None, key: Any) -> dict[str, Any]:
        """Answer an ``elicitation/create``. ``key`` names the question while it waits
        (``handle.pending_input``): the server request's id, or the input request's key."""
        parsed = self.session.validate(
            ElicitRequestParams, params, "elicitation/create params", "elicitation/create"
        )
        if handle is not None and handle.done():
            raise HandlerError(INVALID_PARAMS, ended_reason(handle.task_id, handle.server_status))
        params = tag_question(params, handle.task_id if handle is not None else None)
        if self.elicitation_handler is None and handle is not None and handle.answers is not None:
            content = elicitation.answer_from(parsed.requested_schema, handle.answers)
            if content is not None:
                return _answered(handle, parsed.message, "answers", {"action": "accept", "content": content})
        handler, source = (
            (self.elicitation_handler, "handler")
            if self.elicitation_handler
            else (self.ask_user, "person")
            if self.ask_user
            else (None, "no handler")
        )
        if handler is None:
            return _answered(handle, parsed.message, source, {"action": "decline"})
        if handle is not None:
            control_of(handle).question_opened(key, {"method": "elicitation/create", "params": params})
        try:
            answer = await handler(params)
        finally:
            if handle is not None:
                control_of(handle).question_closed(key)
        if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
            raise HandlerError(
                -32603,
                "the elicitation handler returned no valid answer "
                "(need {'action': 'accept'|'decline'|'cancel', ...})",
            )
        return _answered(handle, parsed.message, source, answer)

    async def sample(self, params: dict[str, Any], handle: TaskHandle | None) -> dict[str, Any]:
        """Answer a ``sampling/createMessage`` through the sampling handler (refused without one)."""
        self.session.validate(
            CreateMessageRequestParams, params, "sampling/createMessage params", "sampling/createMessage"
        )
        if handle is not None and handle.done():
            raise HandlerError(INVALID_PARAMS, ended_reason(handle.task_id, handle.server_status))
        params = tag_question(params, handle.task_id if handle is not None else None)
        if self.sampling_handler is None:
            _answered(handle, SAMPLING_QUESTION, "no handler", {"action": "decline"})
            raise HandlerError(-1, "this client has no model to sample from (no sampling_handler)")
        answer = await self.sampling_handler(params)
        _answered(handle, SAMPLING_QUESTION, "handler", {"action": "accept"})
        return answer

    async def answer_inputs(
        self, requests: dict[str, dict[str, Any]], handle: TaskHandle | None
    ) -> dict[str, Any]:
        """Answer input requests (a multi round-trip request's, or an ext task's), key by key, through
        the same path as server requests. A key nothing here can answer is left out."""
        keys = list(requests)
        answers = await asyncio.gather(*(self._answer_input(key, requests[key], handle) for key in keys))
        return {key: answer for key, answer in zip(keys, answers, strict=True) if answer is not None}

    async def _answer_input(self, key: str, request: dict[str, Any], handle: TaskHandle | None) -> Any:
        method = request.get("method")
        params = request.get("params") or {}
        try:
            if method == "elicitation/create":
                return await self.elicit(params, handle, key)
            if method == "sampling/createMessage":
                return await self.sample(params, handle)
            if method == "roots/list":
                return {"roots": []}
        except (HandlerError, InvalidMessage) as exc:
            log.warning("%s: could not answer %s (%s): %s", self.server, key, method, exc)
            return {"action": "cancel"} if method == "elicitation/create" else None
        except Exception:  # a handler's bug: the question is dismissed, as a form closed unanswered
            log.exception("%s: the handler for %s (%s) failed", self.server, key, method)
            return {"action": "cancel"} if method == "elicitation/create" else None
        log.warning("%s: the server asked for %r (%s), which this client cannot answer", self.server, key, method)
        return None


def _answered(handle: TaskHandle | None, message: str, source: str, answer: dict[str, Any]) -> dict[str, Any]:
    if handle is not None:
        control_of(handle).question_answered(message, source, answer["action"], answer.get("content"))
    return answer
