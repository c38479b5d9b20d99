import pytest

from mcp_tasks_jupyter.protocol import jsonrpc
from mcp_tasks_jupyter.protocol.jsonrpc import (
    ErrorResponse,
    MessageError,
    Notification,
    Request,
    Response,
    decode,
    parse_message,
)


def test_id_zero_is_a_valid_request_and_response_id():
    assert parse_message({"jsonrpc": "2.0", "id": 0, "method": "ping"}) == Request(0, "ping", {})
    assert parse_message({"jsonrpc": "2.0", "id": 0, "result": {}}) == Response(0, {})
    err = parse_message({"jsonrpc": "2.0", "id": 0, "error": {"code": -1, "message": "no"}})
    assert isinstance(err, ErrorResponse) and err.id == 0


def test_kinds_are_told_apart():
    assert isinstance(parse_message({"jsonrpc": "2.0", "method": "n", "params": {"a": 1}}), Notification)
    assert parse_message({"jsonrpc": "2.0", "id": "x", "method": "m", "params": {"a": 1}}).params == {"a": 1}
    err = parse_message({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse", "data": [1]}})
    assert err == ErrorResponse(None, -32700, "parse", [1])


@pytest.mark.parametrize(
    "obj, reason",
    [
        ([1], "expected a JSON object"),
        ({"id": 1, "result": {}}, "jsonrpc"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "jsonrpc"),
        ({"jsonrpc": "2.0", "id": True, "method": "m"}, "'id'"),
        ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, "'id'"),
        ({"jsonrpc": "2.0", "id": 1, "method": 3}, "'method'"),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]}, "'params'"),
        ({"jsonrpc": "2.0", "id": 1}, "neither 'result' nor 'error'"),
        ({"jsonrpc": "2.0", "id": 1, "result": "ok"}, "'result' must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "integer 'code'"),
        ({"jsonrpc": "2.0"}, "neither 'method' nor 'id'"),
    ],
)
def test_invalid_messages_say_why(obj, reason):
    with pytest.raises(MessageError, match=reason.replace("(", r"\(")):
        parse_message(obj)


def test_decode_handles_batches_and_bad_json():
    msgs = decode(b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"x"}]')
    assert [type(m) for m in msgs] == [Response, Notification]
    with pytest.raises(MessageError, match="not valid JSON"):
        decode(b"{nope")
    with pytest.raises(MessageError, match="empty batch"):
        decode(b"[]")


def test_encode_round_trip_is_compact_and_unicode():
    data = jsonrpc.encode(jsonrpc.request(0, "tools/call", {"name": "é"}))
    assert b" " not in data and "é".encode() in data
    assert decode(data) == [Request(0, "tools/call", {"name": "é"})]
    assert jsonrpc.error_response(3, -32601, "nope", {"x": 1})["error"] == {
        "code": -32601,
        "message": "nope",
        "data": {"x": 1},
    }
    assert "params" not in jsonrpc.notification("notifications/initialized", None)
