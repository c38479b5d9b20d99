"""What a server sends is checked and bounded before use: JSON decoding, task fields, wire models."""

import pytest

from mcp_tasks_jupyter.protocol import bounds, jsonrpc, modern, tasks_ext, tasks_sep1686
from mcp_tasks_jupyter.protocol.jsonrpc import MessageError, Response, decode
from mcp_tasks_jupyter.protocol.task_state import parse_task
from mcp_tasks_jupyter.protocol.types import ProgressParams, parse

# -- decode ---------------------------------------------------------------------------------------


def _result(value: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"result":{"v":' + value.encode() + b"}}"


@pytest.mark.parametrize(
    "value, reason",
    [
        ("NaN", "NaN is not a JSON number"),
        ("Infinity", "Infinity is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
        ("1e400", "too large for a double"),
        ("-1e400", "too large for a double"),
        ("9" * 301, "an integer of 301 digits"),
        ("9" * 5000, "an integer of 5000 digits"),  # json.loads: ValueError, not JSONDecodeError
        ('"\\ud800"', "unpaired UTF-16 surrogate"),
        ('"\\udc00x"', "unpaired UTF-16 surrogate"),
    ],
)
@pytest.mark.parametrize("as_text", [False, True], ids=["bytes", "text"])  # text: an SSE event's data
def test_numbers_and_text_json_does_not_have_are_refused(value, reason, as_text):
    with pytest.raises(MessageError, match=reason):
        decode(_result(value).decode() if as_text else _result(value))


@pytest.mark.parametrize("as_text", [False, True], ids=["bytes", "text"])
def test_what_json_does_have_is_kept(as_text):
    def decoded(data: bytes) -> object:
        return decode(data.decode() if as_text else data)[0].result

    assert decoded(_result("1e300")) == {"v": 1e300}
    assert decoded(_result("9" * 300)) == {"v": int("9" * 300)}
    assert decoded(_result("123456789012345678901234")) == {"v": 123456789012345678901234}  # beyond 64 bits
    assert decoded(_result("1e-400")) == {"v": 0.0}
    assert decoded(_result('"\\ud83d\\ude00 \\\\ud800"')) == {"v": "\U0001f600 \\ud800"}
    assert decode("\ufeff".encode() + _result("1"))[0].result == {"v": 1}  # a UTF-8 BOM is tolerated in bytes


@pytest.mark.parametrize("data", [b"\xff\xfe{\x00}\x00", b'"\xed\xa0\x80"', b'{"a": "\xc3"}'])
def test_bytes_must_be_utf8(data):
    with pytest.raises(MessageError, match="not valid JSON"):
        decode(data)


def test_nesting_is_bounded_whatever_the_interpreter_allows():
    def nested(depth: int) -> bytes:
        return b'{"jsonrpc":"2.0","id":1,"result":{"v":' + b"[" * (depth - 2) + b"]" * (depth - 2) + b"}}"

    assert isinstance(decode(nested(jsonrpc.MAX_DEPTH))[0], Response)
    with pytest.raises(MessageError, match=f"nested deeper than {jsonrpc.MAX_DEPTH} levels"):
        decode(nested(jsonrpc.MAX_DEPTH + 1))
    with pytest.raises(MessageError, match="nested deeper"):  # json.loads: RecursionError
        decode(nested(100_000))
    # Many brackets side by side (or inside strings) are not depth.
    wide = b'{"jsonrpc":"2.0","id":1,"result":{"v":[' + b",".join([b"[]"] * 500) + b'],"s":"' + b"[" * 500 + b'"}}'
    assert len(decode(wide)[0].result["v"]) == 500


def test_batches_are_bounded():
    one = b'{"jsonrpc":"2.0","method":"n"}'
    assert len(decode(b"[" + b",".join([one] * jsonrpc.MAX_BATCH) + b"]")) == jsonrpc.MAX_BATCH
    with pytest.raises(MessageError, match=f"at most {jsonrpc.MAX_BATCH}"):
        decode(b"[" + b",".join([one] * (jsonrpc.MAX_BATCH + 1)) + b"]")


def test_an_error_message_is_cut():
    error = decode(b'{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"' + b"x" * 10_000 + b'"}}')[0]
    assert len(error.message) == jsonrpc.MAX_ERROR_MESSAGE_CHARS and error.message.endswith(bounds.ELLIPSIS)


# -- task fields -----------------------------------------------------------------------------------

TASK = {"taskId": "t1", "status": "working"}


@pytest.mark.parametrize(
    "sent, kept",
    [
        (0, bounds.MIN_POLL_INTERVAL_MS),
        (1, bounds.MIN_POLL_INTERVAL_MS),
        (99.9, bounds.MIN_POLL_INTERVAL_MS),
        (100, 100),
        (250.7, 250),
        (60_000, 60_000),
        (86_400_000, bounds.MAX_POLL_INTERVAL_MS),
        (2**53, bounds.MAX_POLL_INTERVAL_MS),
        (None, None),
    ],
)
def test_the_poll_interval_is_clamped(sent, kept):
    assert parse_task({**TASK, "pollInterval": sent}).poll_interval_ms == kept


@pytest.mark.parametrize(
    "sent, kept",
    [
        (0, 0),
        (60_000, 60_000),
        (bounds.MAX_TTL_MS, bounds.MAX_TTL_MS),
        (10**15, bounds.MAX_TTL_MS),
        (None, None),
    ],
)
def test_the_ttl_is_at_most_a_year_and_null_stays_unlimited(sent, kept):
    assert parse_task({**TASK, "ttl": sent}).ttl_ms == kept


@pytest.mark.parametrize(
    "sent, shown",
    [
        ("soon", "got 'soon'"),
        (True, "got True"),
        ({"ms": 5}, "got an object"),
        ([1], "got an array"),
        (-1, "got -1"),
        (float("nan"), "got nan"),
        (float("inf"), "got inf"),
        (-float("inf"), "got -inf"),
    ],
)
def test_a_wrong_number_names_the_field(sent, shown):
    with pytest.raises(ValueError) as info:
        parse_task({**TASK, "pollInterval": sent}, "tasks/get result")
    assert str(info.value) == (
        f"invalid tasks/get result: 'pollInterval' must be a finite, non-negative number of milliseconds, {shown}"
    )


@pytest.mark.parametrize("key", ["ttl", "pollInterval"])
def test_an_absurd_number_is_refused_not_clamped(key):
    with pytest.raises(
        ValueError,
        match=f"invalid task: '{key}' must be at most 9007199254740992 "
        r"milliseconds \(beyond any sensible value\), got 9007199254740994",
    ):
        parse_task({**TASK, key: 2**53 + 2})
    with pytest.raises(ValueError, match=f"'{key}' must be at most .* got a number too large to show"):
        parse_task({**TASK, key: 10**300})


def test_texts_are_cut_and_ids_refused_when_absurd():
    state = parse_task({**TASK, "statusMessage": "m" * 10_000, "createdAt": "2025-" + "1" * 100})
    assert len(state.status_message) == bounds.MAX_STATUS_MESSAGE_CHARS
    assert state.status_message.endswith(bounds.ELLIPSIS)
    assert len(state.created_at) == bounds.MAX_TIMESTAMP_CHARS
    assert parse_task({**TASK, "taskId": "x" * bounds.MAX_TASK_ID_CHARS}).task_id
    with pytest.raises(ValueError, match="'taskId' is 1025 characters long"):
        parse_task({**TASK, "taskId": "x" * 1025})
    for bad in ["a\nb", "\x1b[31mred", "id\u202e", "\ud800", "\u200b"]:
        with pytest.raises(ValueError, match="'taskId' must be printable text"):
            parse_task({**TASK, "taskId": bad})
    with pytest.raises(ValueError, match="'statusMessage' must be a string, got 5"):
        parse_task({**TASK, "statusMessage": 5})


@pytest.mark.parametrize("status", [[], {}, ["working"], 1, None, "x" * 1000])
def test_any_wrong_status_is_a_value_error(status):
    with pytest.raises(ValueError, match="unknown status") as info:
        parse_task({**TASK, "status": status})
    assert len(str(info.value)) < 120


def test_ext_old_field_names_are_checked_under_their_own_names():
    state = tasks_ext.parse_detailed({**TASK, "ttlSeconds": 1.5, "pollIntervalMilliseconds": 20}).state
    assert state.ttl_ms == 1500 and state.poll_interval_ms == bounds.MIN_POLL_INTERVAL_MS
    with pytest.raises(ValueError, match="'ttlSeconds' must be a finite, non-negative number of seconds, got 'x'"):
        tasks_ext.parse_detailed({**TASK, "ttlSeconds": "x"})
    with pytest.raises(ValueError, match=r"'ttlSeconds' must be at most 9007199254741 seconds .* got 1e\+306"):
        tasks_ext.parse_detailed({**TASK, "ttlSeconds": 1e306})  # * 1000 would be an infinity
    with pytest.raises(ValueError, match=r"'pollIntervalMilliseconds' must be .* got 'soon'"):
        tasks_ext.parse_detailed({**TASK, "pollIntervalMilliseconds": "soon"})


def test_sep1686_error_text_is_cut():
    state, error = tasks_sep1686.parse_task_state({**TASK, "status": "failed", "error": {"message": "e" * 9000}})
    assert error == state.status_message and len(error) == bounds.MAX_STATUS_MESSAGE_CHARS


# -- wire models and errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "nan", "-Infinity"])
def test_wire_models_take_no_infinities_even_spelt_as_strings(value):
    with pytest.raises(ValueError, match="invalid progress: progress"):
        parse(ProgressParams, {"progressToken": 1, "progress": value}, "progress")


def test_error_messages_quote_little_of_what_the_server_sent():
    with pytest.raises(ValueError) as info:
        modern.input_requests({"inputRequests": {"k" * 10_000: 5}}, "tasks/get result")
    assert len(str(info.value)) < 200
