"""The stateless 2026-07-28 wire codec: per-request _meta, resultType, server/discover, MRTR."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.protocol import modern
from mcp_tasks_jupyter.protocol.versions import ALL, MODERN, SUPPORTED, is_modern


def test_versions():
    assert MODERN == ("2026-07-28",) and ALL[0] == "2026-07-28" and set(SUPPORTED) < set(ALL)
    assert is_modern("2026-07-28") and not is_modern("2025-11-25")


def test_request_meta_is_merged_and_own_keys_win():
    meta = modern.request_meta("2026-07-28", {"elicitation": {}}, {"name": "c", "version": "1"})
    assert meta == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    }
    assert modern.with_meta(None, meta) == {"_meta": meta}
    params = {"name": "t", "_meta": {"progressToken": "p"}}
    merged = modern.with_meta(params, meta)
    assert merged["_meta"] == {**meta, "progressToken": "p"} and merged["name"] == "t"
    assert params == {"name": "t", "_meta": {"progressToken": "p"}}  # the caller's dict is untouched


@pytest.mark.parametrize(
    ("result", "kind"),
    [
        ({}, "complete"),
        ({"resultType": "complete"}, "complete"),
        ({"resultType": "task"}, "task"),
        ({"resultType": "input_required"}, "input_required"),
        ({"resultType": 3}, "complete"),
    ],
)
def test_result_type_missing_means_complete(result, kind):
    assert modern.result_type(result) == kind


def test_discover_result_and_server_info():
    raw = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}},
        "ttlMs": 0,
    }
    result = modern.parse_discover(raw)
    assert result.supported_versions == ["2026-07-28"] and result.capabilities == {"tools": {}}
    assert modern.server_info(raw).name == "s"
    assert modern.server_info({}) is None
    with pytest.raises(ValueError, match="supportedVersions"):
        modern.parse_discover({})


def test_unsupported_version_errors_identify_a_modern_server():
    data = {"supported": ["2026-07-28", 5], "requested": "1900-01-01"}
    assert modern.supported_versions(data) == ["2026-07-28"]
    assert modern.is_modern_error(-32022, data) and not modern.is_modern_error(-32022, None)
    assert modern.is_modern_error(-32020, None) and modern.is_modern_error(-32021, None)
    assert not modern.is_modern_error(-32601, None) and not modern.is_modern_error(-32000, None)
    assert modern.pick_version(["2025-11-25", "2026-07-28"], MODERN) == "2026-07-28"
    assert modern.pick_version(["2025-06-18"], MODERN) is None
    assert modern.pick_version(["2025-06-18"], SUPPORTED) == "2025-06-18"


def test_input_required_is_parsed_and_validated():
    requests = {"confirm": {"method": "elicitation/create", "params": {"message": "ok?"}}}
    assert modern.parse_input_required({"inputRequests": requests, "requestState": "s"}) == (requests, "s")
    assert modern.parse_input_required({"requestState": "only"}) == ({}, "only")
    for bad in (
        {},
        {"inputRequests": []},
        {"inputRequests": {"k": {"params": {}}}},
        {"inputRequests": {"k": {"method": "m", "params": 3}}},
        {"requestState": 7},
    ):
        with pytest.raises(ValueError):
            modern.parse_input_required(bad)


def test_retry_params_carry_the_exact_state_and_nothing_older():
    original = {"name": "t", "arguments": {"a": 1}, "_meta": {"progressToken": "p"}}
    state = '  {"nonce": "é", "n": 1.0}  '
    retry = modern.retry_params(original, {"confirm": {"action": "accept"}}, state)
    assert retry == {**original, "inputResponses": {"confirm": {"action": "accept"}}, "requestState": state}
    again = modern.retry_params(retry, {"next": {}}, None)
    assert again["inputResponses"] == {"next": {}} and "requestState" not in again
    assert "inputResponses" not in original
