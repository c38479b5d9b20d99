"""Multi round-trip requests (MRTR, 2026-07-28): questions answered by the client retrying the request.

A tool body that asks a question (``ctx.elicit``) during an ordinary 2026-07-28 request cannot
send a request of its own: the server answers ``{"resultType": "input_required",
"inputRequests": {KEY: {"method": "elicitation/create", "params": ...}}, "requestState": STATE}``
and the client retries the same request (a new JSON-RPC id) with ``"inputResponses": {KEY:
ElicitResult}`` and the exact ``requestState``. The demo then runs the body again from the start;
question number *n* of the run has the key ``input-<n>``, and a question whose answer is known is
answered at once, so the body gets one question further each round. Questions asked at the same
time (``asyncio.gather``) go out together.

``requestState`` carries the answers so far, the tool and a digest of its arguments, and an
expiry (10 minutes). It is signed (HMAC-SHA256 with a key made at process start), not encrypted:
it returns to the client that gave the answers. State that fails the signature, has expired, or
was made for another tool or other arguments is refused with -32602; responses to keys the state
did not ask are ignored.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from .rpc import INVALID_PARAMS, RpcError

STATE_SECONDS = 600
ELICIT_ACTIONS = ("accept", "decline", "cancel")


class InputRequired(Exception):
    """A body asked a question whose answer this round does not have (the questions asked
    are on the context)."""


def check_answer(key: str, method: str, answer: Any) -> dict[str, Any]:
    """A client's response to a question, checked for its method; -32602 when malformed."""
    if not isinstance(answer, dict):
        raise RpcError(INVALID_PARAMS, f"inputResponses[{key!r}] must be an object")
    if method == "elicitation/create":
        if answer.get("action") not in ELICIT_ACTIONS:
            raise RpcError(
                INVALID_PARAMS, f"inputResponses[{key!r}].action must be one of {', '.join(ELICIT_ACTIONS)}"
            )
        if answer["action"] == "accept" and not isinstance(answer.get("content", {}), dict):
            raise RpcError(INVALID_PARAMS, f"inputResponses[{key!r}].content must be an object")
    return answer


def input_responses(params: dict[str, Any]) -> dict[str, Any]:
    """``params.inputResponses`` as a map of objects (empty when absent); -32602 when malformed."""
    responses = params.get("inputResponses")
    if responses is None:
        return {}
    if not isinstance(responses, dict) or not all(isinstance(value, dict) for value in responses.values()):
        raise RpcError(INVALID_PARAMS, "inputResponses must be an object whose values are objects")
    return responses


@dataclass
class Round:
    """What one round of a multi round-trip request knows: the answers so far, by key."""

    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    asked: dict[str, dict[str, Any]] = field(default_factory=dict)  # questions of this round, by key
    count: int = 0  # questions met so far in this run of the body

    def next_key(self) -> str:
        self.count += 1
        return f"input-{self.count}"


class StateCodec:
    """Signs and checks ``requestState`` (see the module docstring)."""

    def __init__(self, key: bytes | None = None, clock: Any = time.time) -> None:
        self._key = key or secrets.token_bytes(32)
        self._clock = clock

    @staticmethod
    def digest(tool: str, arguments: dict[str, Any]) -> str:
        raw = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(raw).hexdigest()[:32]

    def encode(self, tool: str, arguments: dict[str, Any], answers: dict[str, Any], asked: dict[str, Any]) -> str:
        payload = {
            "tool": tool,
            "args": self.digest(tool, arguments),
            "answers": answers,
            "asked": {key: question["method"] for key, question in asked.items()},
            "exp": int(self._clock()) + STATE_SECONDS,
        }
        body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")
        return f"{body}.{self._sign(body)}"

    def decode(self, state: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The payload of a state this process made for this tool and these arguments."""
        if not isinstance(state, str) or state.count(".") != 1 or len(state) > 1_000_000:
            raise RpcError(INVALID_PARAMS, "Invalid requestState")
        body, signature = state.split(".")
        if not hmac.compare_digest(signature, self._sign(body)):
            raise RpcError(INVALID_PARAMS, "Invalid requestState: bad signature")
        try:
            payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (binascii.Error, ValueError):
            raise RpcError(INVALID_PARAMS, "Invalid requestState") from None
        if not isinstance(payload, dict):
            raise RpcError(INVALID_PARAMS, "Invalid requestState")
        if payload.get("exp", 0) < self._clock():
            raise RpcError(INVALID_PARAMS, "Invalid requestState: expired; call the tool again without it")
        if payload.get("tool") != tool or payload.get("args") != self.digest(tool, arguments):
            raise RpcError(INVALID_PARAMS, "Invalid requestState: it belongs to another call")
        return payload

    def round_for(self, params: dict[str, Any], tool: str, arguments: dict[str, Any]) -> Round:
        """The answers a (retried) request brings: those in its state plus its responses to the
        questions that state asked."""
        responses = input_responses(params)
        if params.get("requestState") is None:
            return Round()
        payload = self.decode(params["requestState"], tool, arguments)
        answers = dict(payload.get("answers") or {})
        for key, method in (payload.get("asked") or {}).items():
            if key in responses:
                answers[key] = check_answer(key, method, responses[key])
        return Round(answers=answers)

    def _sign(self, body: str) -> str:
        mac = hmac.new(self._key, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")
