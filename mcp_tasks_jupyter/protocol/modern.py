"""The stateless 2026-07-28 wire: per-request ``_meta``, ``server/discover``, ``resultType``, and
multi round-trip requests (MRTR, SEP-2322). No I/O.

Every request carries ``params._meta`` with the protocol version, the client's capabilities and
its identity; there is no ``initialize``. A result says what it is in ``resultType`` (missing means
``complete``): ``input_required`` asks the client to answer ``inputRequests`` and retry the same
method with ``inputResponses`` and the exact ``requestState``; ``task`` is the tasks extension's.
"""

from __future__ import annotations

from typing import Any

from .bounds import quoted
from .types import DiscoverResult, Implementation, parse

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"

DISCOVER = "server/discover"
SUBSCRIPTIONS_LISTEN = "subscriptions/listen"

COMPLETE = "complete"
INPUT_REQUIRED = "input_required"
TASK = "task"

HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: Error codes only a 2026-07-28 (or later) server sends: they identify a modern server.
MODERN_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})


def request_meta(version: str, capabilities: dict[str, Any], client_info: dict[str, Any]) -> dict[str, Any]:
    """The ``_meta`` every request carries (build it once; it is copied into each request)."""
    return {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: capabilities, CLIENT_INFO: client_info}


def with_meta(params: dict[str, Any] | None, meta: dict[str, Any]) -> dict[str, Any]:
    """``params`` with ``meta`` merged into its ``_meta`` (keys already there, e.g. a progress token, win)."""
    if not params:
        return {"_meta": meta}
    own = params.get("_meta")
    return {**params, "_meta": {**meta, **own} if isinstance(own, dict) else meta}


def result_type(result: dict[str, Any]) -> str:
    """What kind of result this is; a missing (or non-string) ``resultType`` means ``complete``."""
    kind = result.get("resultType")
    return kind if isinstance(kind, str) else COMPLETE


def parse_discover(result: Any) -> DiscoverResult:
    """Validate a ``server/discover`` result (raises ValueError)."""
    return parse(DiscoverResult, result, "server/discover result")


def server_info(result: dict[str, Any]) -> Implementation | None:
    """The server's self-description from a result's ``_meta`` (None when absent or invalid)."""
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        return None
    try:
        return parse(Implementation, info, "serverInfo")
    except ValueError:
        return None


def supported_versions(error_data: Any) -> list[str]:
    """The versions an UnsupportedProtocolVersionError offers (``data.supported``), in its order."""
    supported = error_data.get("supported") if isinstance(error_data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def is_modern_error(code: int, data: Any) -> bool:
    """Whether a JSON-RPC error identifies a modern server (not a legacy one refusing a request)."""
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        return bool(supported_versions(data))
    return code in MODERN_ERROR_CODES


def pick_version(offered: list[str], ours: tuple[str, ...]) -> str | None:
    """The newest version of ``ours`` that the server offered, or None."""
    return next((v for v in ours if v in offered), None)


# --- multi round-trip requests --------------------------------------------------------------


def input_requests(obj: dict[str, Any], what: str) -> dict[str, dict[str, Any]]:
    """Validate an ``inputRequests`` map (key → ``{method, params}``); absent means empty."""
    requests = obj.get("inputRequests")
    if requests is None:
        return {}
    if not isinstance(requests, dict):
        raise ValueError(f"invalid {what}: 'inputRequests' must be an object")
    for key, request in requests.items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise ValueError(f"invalid {what}: inputRequests[{quoted(key)}] must be an object with a 'method'")
        params = request.get("params", {})
        if not isinstance(params, dict):
            raise ValueError(f"invalid {what}: inputRequests[{quoted(key)}].params must be an object")
    return requests


def parse_input_required(result: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], str | None]:
    """``(inputRequests, requestState)`` of an ``input_required`` result (raises ValueError)."""
    requests = input_requests(result, "input_required result")
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        raise ValueError("invalid input_required result: 'requestState' must be a string")
    if not requests and state is None:
        raise ValueError("invalid input_required result: neither 'inputRequests' nor 'requestState'")
    return requests, state


def retry_params(original: dict[str, Any], responses: dict[str, Any], request_state: str | None) -> dict[str, Any]:
    """The params of an MRTR retry: the original ones plus ``inputResponses`` and, only when the
    server sent one, the exact ``requestState``. Nothing of an earlier round is carried over."""
    params = {k: v for k, v in original.items() if k not in ("inputResponses", "requestState")}
    params["inputResponses"] = responses
    if request_state is not None:
        params["requestState"] = request_state
    return params
