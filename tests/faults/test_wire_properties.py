"""Property-based tests: whatever a server sends, only the documented errors come out, and every value
the client keeps is inside the documented bounds.

1. Random bytes, random JSON (NaN, huge numbers, deep nesting, surrogate escapes) and mutated valid
   messages into ``jsonrpc.decode``: messages or MessageError, nothing else.
2. Random task objects into ``parse_task`` and every dialect codec: a TaskState inside the bounds of
   ``protocol/bounds.py``, or a ValueError saying which field was wrong.
3. Random messages, decoded as a transport does, into a real Session (with a real Client and a task
   handle listening for progress): no exception escapes, pending requests end with a dict or an MCPError.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mcp_tasks_jupyter.client import Client
from mcp_tasks_jupyter.dialects import Core2025Dialect
from mcp_tasks_jupyter.errors import MCPError
from mcp_tasks_jupyter.protocol import bounds, jsonrpc, tasks_2025, tasks_ext, tasks_sep1686
from mcp_tasks_jupyter.protocol.task_state import SERVER_STATUSES, TaskState, _checked_task, parse_task
from mcp_tasks_jupyter.session.session import Session
from mcp_tasks_jupyter.tasks.control import control_of
from mcp_tasks_jupyter.transport.base import Transport

FAST = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- strategies ----------------------------------------------------------------------------------

#: Numbers a server may send: ordinary ones, huge ones (beyond a double), NaN and the infinities.
numbers = st.one_of(
    st.integers(-10, 10**6),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 99, 100, 60_000, 60_001, 2**53, 2**53 + 1, 10**308, 10**309, 1e308, -0.0]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)


def _dumps(value: Any) -> str:
    """JSON as a sloppy server writes it: NaN and Infinity allowed, huge integers in full."""
    return json.dumps(value, allow_nan=True)


@st.composite
def deep(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 5000))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}"), ('[{"a":', "}]")]))
    return opener * depth + "1" + closer * depth


@st.composite
def surrogates(draw: st.DrawFn) -> str:
    """A message whose string holds escapes of UTF-16 surrogates, paired or not."""
    parts = draw(
        st.lists(
            st.sampled_from(["\\ud800", "\\udfff", "\\ud83d\\ude00", "a", "\\\\ud800"]), min_size=1, max_size=4
        )
    )
    return '{"jsonrpc":"2.0","id":1,"result":{"text":"' + "".join(parts) + '"}}'


VALID = [
    b'{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","pollInterval":500}}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1.5}}',
    b'[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}]',
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid message with a few bytes replaced, inserted or deleted."""
    data = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["replace", "insert", "delete"]))
        byte = draw(
            st.sampled_from(
                [
                    0x00,
                    0x22,
                    0x5B,
                    0x5D,
                    0x7B,
                    0x7D,
                    0x2C,
                    0x3A,
                    0x5C,
                    0xFF,
                    0xED,
                    0x80,
                    *b"0123456789eE-+.NaIfinity",
                ]
            )
        )
        if kind == "insert" or at == len(data):
            data.insert(at, byte)
        elif kind == "replace":
            data[at] = byte
        else:
            del data[at]
    return bytes(data)


@st.composite
def envelopes(draw: st.DrawFn) -> Any:
    """Something shaped like a JSON-RPC message, with random parts."""
    msg: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]))}
    if draw(st.booleans()):
        msg["id"] = draw(st.one_of(st.integers(-2, 6), st.text(max_size=3), st.none(), st.booleans(), numbers))
    kind = draw(st.sampled_from(["method", "result", "error", "none"]))
    if kind == "method":
        msg["method"] = draw(st.one_of(st.sampled_from(METHODS), st.text(max_size=10), json_values))
        if draw(st.booleans()):
            msg["params"] = draw(st.one_of(params(), json_values))
    elif kind == "result":
        msg["result"] = draw(
            st.one_of(
                st.dictionaries(st.text(max_size=8), json_values, max_size=4),
                json_values,
                task_objects().map(lambda t: {"task": t}),
            )
        )
    elif kind == "error":
        msg["error"] = draw(
            st.one_of(
                st.fixed_dictionaries(
                    {
                        "code": st.one_of(st.integers(-33000, 0), numbers, st.booleans()),
                        "message": st.one_of(st.text(max_size=30), st.just("x" * 10_000), scalars),
                    },
                    optional={"data": json_values},
                ),
                json_values,
            )
        )
    return msg


TOKEN = "tok"
METHODS = [
    "notifications/progress",
    "notifications/cancelled",
    "notifications/tasks/status",
    "notifications/tasks",
    "notifications/message",
    "ping",
    "elicitation/create",
    "sampling/createMessage",
    "tasks/get",
    "no/such/method",
]


@st.composite
def params(draw: st.DrawFn) -> dict[str, Any]:
    """Params a server might send with one of METHODS, half of them about the one known task."""
    base: dict[str, Any] = draw(
        st.one_of(task_objects(), st.dictionaries(st.text(max_size=8), json_values, max_size=3))
    )
    if draw(st.booleans()):
        base["progressToken"] = draw(st.sampled_from([TOKEN, "other", 1, None]))
        base["progress"] = draw(numbers)
        if draw(st.booleans()):
            base["total"] = draw(numbers)
        if draw(st.booleans()):
            base["message"] = draw(scalars)
    if draw(st.booleans()):
        base["taskId"] = draw(st.one_of(st.just("t1"), json_values))
    if draw(st.booleans()):
        base["requestId"] = draw(st.one_of(st.integers(-1, 5), json_values))
    return base


TASK_KEYS = [
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttl",
    "pollInterval",
    "ttlMs",
    "pollIntervalMs",
    "ttlSeconds",
    "pollIntervalMilliseconds",
    "keepAlive",
    "pollFrequency",
    "error",
    "result",
    "inputRequests",
]


@st.composite
def task_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A task as a server might describe it: plausible values, wrong types, huge and non-finite numbers."""
    ids = st.one_of(
        st.just("t1"),
        st.text(max_size=12),
        st.just("x" * 5000),
        st.sampled_from(["", "a\nb", "\x00", "id\u202e", "\ud800", " "]),
        json_values,
    )
    statuses = st.one_of(st.sampled_from(sorted(SERVER_STATUSES)), st.text(max_size=10), json_values)
    texts = st.one_of(st.text(max_size=30), st.just("m" * 10_000), scalars, json_values)
    values = {
        "taskId": ids,
        "status": statuses,
        "statusMessage": texts,
        "createdAt": texts,
        "lastUpdatedAt": texts,
        "error": st.one_of(texts, st.dictionaries(st.sampled_from(["message", "code"]), json_values)),
        "result": json_values,
        "inputRequests": json_values,
    }
    obj: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(TASK_KEYS), unique=True, max_size=len(TASK_KEYS))):
        obj[key] = draw(values.get(key, st.one_of(numbers, scalars, json_values)))
    if draw(st.integers(0, 3)):  # mostly with a sane id and status, so that the numbers get checked
        obj.setdefault("taskId", "t1")
        obj.setdefault("status", draw(st.sampled_from(sorted(SERVER_STATUSES))))
    return obj


# -- 1. decode -----------------------------------------------------------------------------------

MESSAGE_TYPES = (jsonrpc.Request, jsonrpc.Notification, jsonrpc.Response, jsonrpc.ErrorResponse)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(map(_finite, value.values()))
    if isinstance(value, list):
        return all(map(_finite, value))
    return True


@pytest.mark.timeout(60)
@FAST
@given(
    st.one_of(
        st.binary(max_size=300),
        st.text(max_size=100).map(str.encode),
        json_values.map(_dumps).map(str.encode),
        envelopes().map(_dumps).map(str.encode),
        st.lists(envelopes(), max_size=3).map(_dumps),
        mutated(),
        deep(),
        surrogates(),
    )
)
def test_decode_yields_messages_or_message_error(data: bytes | str) -> None:
    try:
        messages = jsonrpc.decode(data)
    except jsonrpc.MessageError:
        return
    assert 1 <= len(messages) <= jsonrpc.MAX_BATCH
    for message in messages:
        assert isinstance(message, MESSAGE_TYPES)
        body = (
            message.result
            if isinstance(message, jsonrpc.Response)
            else message.data
            if isinstance(message, jsonrpc.ErrorResponse)
            else message.params
        )
        assert _finite(body), "a non-finite number got through"
        assert _depth(body) < jsonrpc.MAX_DEPTH
        jsonrpc.encode({"body": body})  # what the client keeps can be sent back (valid UTF-8)
        if isinstance(message, jsonrpc.ErrorResponse):
            assert len(message.message) <= jsonrpc.MAX_ERROR_MESSAGE_CHARS


def _outcome(read: Any) -> str:
    """What ``read()`` gives, written out exactly (``repr`` tells 1 from 1.0 and 0.0 from -0.0), or its error."""
    try:
        return repr(read())
    except (ValueError, UnicodeError) as exc:  # MessageError, and what parse_task and encoding raise
        return f"{type(exc).__name__}: {exc}"


@st.composite
def long_numbers(draw: st.DrawFn) -> bytes:
    """An answer holding numbers of 17 to 21 digits, around the 64-bit limit of orjson's integers."""
    digits = draw(st.integers(17, 21))
    value = draw(st.integers(10 ** (digits - 1), 10**digits - 1)) * draw(st.sampled_from([1, -1]))
    tail = draw(st.sampled_from(["", ".5", "e3", "E-2"]))
    return b'{"jsonrpc":"2.0","id":1,"result":{"n":%d%s,"m":[%d]}}' % (value, tail.encode(), value)


@pytest.mark.timeout(60)
@FAST
@given(
    st.one_of(
        st.binary(max_size=300),
        json_values.map(_dumps).map(str.encode),
        envelopes().map(_dumps).map(str.encode),
        st.lists(envelopes(), max_size=3).map(_dumps).map(str.encode),
        mutated(),
        deep().map(str.encode),
        surrogates().map(str.encode),
        long_numbers(),
        st.sampled_from(VALID).map(lambda valid: b"\xef\xbb\xbf" + valid),  # with a BOM
    )
)
def test_decode_reads_bytes_exactly_as_the_strict_decoder(data: bytes) -> None:
    """Bytes are read by orjson where it agrees with the standard library's strict decoder: the
    messages, their values and every error are the strict decoder's, word for word."""
    strict = _outcome(lambda: jsonrpc._messages(jsonrpc._strict_loads(data)))
    assert _outcome(lambda: jsonrpc.decode(data)) == strict


def test_a_long_integer_stays_an_exact_integer():
    # orjson turns an integer beyond 64 bits into a float; the strict decoder keeps it exact.
    big = 123456789012345678901234567890
    (answer,) = jsonrpc.decode(b'{"jsonrpc":"2.0","id":1,"result":{"n":%d,"m":-%d}}' % (big, 2**63 + 1))
    assert answer.result == {"n": big, "m": -(2**63 + 1)}
    assert type(answer.result["n"]) is int and type(answer.result["m"]) is int


@pytest.mark.timeout(60)
@FAST
@given(
    st.one_of(st.integers(-(10**20), 10**20), st.text(max_size=8)),
    st.one_of(st.sampled_from(METHODS), st.text(max_size=12)),
    st.one_of(
        st.none(),
        st.dictionaries(st.text(max_size=6), st.text(max_size=10), max_size=1),
        st.dictionaries(st.text(max_size=6), json_values, max_size=3),
    ),
)
def test_a_request_from_its_template_is_the_encoded_request(msg_id: Any, method: str, params: Any) -> None:
    """``encode_request`` (a per-method template) writes byte for byte what ``encode(request(...))`` does."""
    expected = _outcome(lambda: jsonrpc.encode(jsonrpc.request(msg_id, method, params)))
    assert _outcome(lambda: jsonrpc.encode_request(msg_id, method, params)) == expected


# -- 2. task fields --------------------------------------------------------------------------------


def _in_bounds(state: TaskState) -> None:
    assert isinstance(state.task_id, str) and 0 < len(state.task_id) <= bounds.MAX_TASK_ID_CHARS
    assert state.task_id.isprintable()
    assert state.status in SERVER_STATUSES
    if state.poll_interval_ms is not None:
        assert type(state.poll_interval_ms) is int
        assert bounds.MIN_POLL_INTERVAL_MS <= state.poll_interval_ms <= bounds.MAX_POLL_INTERVAL_MS
    if state.ttl_ms is not None:
        assert type(state.ttl_ms) is int and 0 <= state.ttl_ms <= bounds.MAX_TTL_MS
    for text, limit in [
        (state.status_message, bounds.MAX_STATUS_MESSAGE_CHARS),
        (state.created_at, bounds.MAX_TIMESTAMP_CHARS),
        (state.last_updated_at, bounds.MAX_TIMESTAMP_CHARS),
    ]:
        assert text is None or (isinstance(text, str) and len(text) <= limit)
    jsonrpc.encode({"id": state.task_id, "m": state.status_message})  # sent back and shown: valid text


CODECS = {
    "parse_task": lambda obj: [parse_task(obj, "tasks/get result")],
    "2025 create": lambda obj: [tasks_2025.parse_create_result({"task": obj})],
    "2025 list": lambda obj: tasks_2025.parse_list_result({"tasks": [obj]})[0],
    "ext create": lambda obj: [tasks_ext.parse_create_result({**obj, "resultType": "task"})],
    "ext get/push": lambda obj: [tasks_ext.parse_detailed(obj, "notifications/tasks").state],
    "sep1686 get/push": lambda obj: [tasks_sep1686.parse_task_state(obj)[0]],
    "sep1686 list": lambda obj: tasks_sep1686.parse_list_result({"tasks": [obj]})[0],
}


@pytest.mark.timeout(60)
@FAST
@given(task_objects(), st.sampled_from(sorted(CODECS)))
def test_task_codecs_give_bounded_states_or_value_errors(obj: dict[str, Any], codec: str) -> None:
    try:
        states = CODECS[codec](obj)
    except ValueError as exc:
        text = str(exc)
        assert text.startswith("invalid "), text
        assert len(text) < 400, "an error message quoting a whole server value"
        return
    for state in states:
        _in_bounds(state)


def _around(*limits: int) -> st.SearchStrategy[Any]:
    """Numbers on and next to each limit, as integers, floats and booleans."""
    near = st.sampled_from([n + d for n in limits for d in (-1, 0, 1)])
    return st.one_of(near, near, near.map(float), st.booleans(), st.none())


@st.composite
def plain_tasks(draw: st.DrawFn, ttl_key: str, poll_key: str) -> dict[str, Any]:
    """Answers that look like a poll's, each field on or next to the edge of what ``bounds.py`` keeps."""

    def text(limit: int) -> st.SearchStrategy[Any]:
        return st.one_of(st.none(), st.integers(limit - 1, limit + 1).map(lambda n: "é" * n), st.integers(0, 1))

    fields = {
        "taskId": st.one_of(
            st.sampled_from(["t1", "", "a\nb", "\ud800", "id\u202e"]),
            st.integers(bounds.MAX_TASK_ID_CHARS - 1, bounds.MAX_TASK_ID_CHARS + 1).map(lambda n: "x" * n),
            st.just(7),
        ),
        "status": st.one_of(st.sampled_from(sorted(SERVER_STATUSES)), st.just("done"), st.just(["working"])),
        "statusMessage": text(bounds.MAX_STATUS_MESSAGE_CHARS),
        "createdAt": text(bounds.MAX_TIMESTAMP_CHARS),
        "lastUpdatedAt": text(bounds.MAX_TIMESTAMP_CHARS),
        ttl_key: _around(0, bounds.MAX_TTL_MS, bounds.MAX_MS),
        poll_key: _around(0, bounds.MIN_POLL_INTERVAL_MS, bounds.MAX_POLL_INTERVAL_MS, bounds.MAX_MS),
    }
    obj = {"taskId": "t1", "status": "working", ttl_key: 600_000, poll_key: 500}
    for key in draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=3)):
        obj[key] = draw(fields[key])
    return obj


@pytest.mark.timeout(60)
@settings(FAST, max_examples=1000)  # cheap examples; enough to reach each edge of each field
@given(
    st.sampled_from([("ttl", "pollInterval"), ("ttlMs", "pollIntervalMs"), ("keepAlive", "pollFrequency")]),
    st.booleans(),
    st.data(),
)
def test_a_task_read_in_one_pass_is_the_task_read_field_by_field(
    keys: tuple[str, str], plain: bool, data: st.DataObject
) -> None:
    """``parse_task``'s one-pass reading of a plain answer gives what the field-by-field checks give."""
    ttl_key, poll_key = keys
    obj = data.draw(plain_tasks(ttl_key, poll_key) if plain else task_objects())
    expected = _outcome(lambda: _checked_task(obj, "tasks/get result", ttl_key, poll_key))
    got = _outcome(lambda: parse_task(obj, "tasks/get result", ttl_key=ttl_key, poll_key=poll_key))
    assert got == expected


EDGES = {
    "taskId": [
        "t1",
        "",
        "a\nb",
        "\ud800",
        "x" * bounds.MAX_TASK_ID_CHARS,
        "x" * (bounds.MAX_TASK_ID_CHARS + 1),
        7,
    ],
    "status": [*sorted(SERVER_STATUSES), "done", ["working"], None],
    "statusMessage": [
        None,
        "",
        "é" * bounds.MAX_STATUS_MESSAGE_CHARS,
        "é" * (bounds.MAX_STATUS_MESSAGE_CHARS + 1),
        1,
    ],
    "createdAt": [None, "é" * bounds.MAX_TIMESTAMP_CHARS, "é" * (bounds.MAX_TIMESTAMP_CHARS + 1), 0],
    "ttl": [n + d for n in (0, bounds.MAX_TTL_MS, bounds.MAX_MS) for d in (-1, 0, 1)] + [None, True, 1.0, 0.5],
    "pollInterval": [
        n + d
        for n in (0, bounds.MIN_POLL_INTERVAL_MS, bounds.MAX_POLL_INTERVAL_MS, bounds.MAX_MS)
        for d in (-1, 0, 1)
    ]
    + [None, False, 500.0],
}


@pytest.mark.parametrize("ttl_key, poll_key", [("ttl", "pollInterval"), ("keepAlive", "pollFrequency")])
@pytest.mark.parametrize(
    "field, value", [(field, value) for field, values in EDGES.items() for value in values], ids=repr
)
def test_a_task_on_each_edge_reads_the_same_in_one_pass(
    field: str, value: Any, ttl_key: str, poll_key: str
) -> None:
    """Every bound of ``parse_task``'s one pass, on and next to its edge: what the field-by-field checks give."""
    key = {"ttl": ttl_key, "pollInterval": poll_key}.get(field, field)
    obj = {"taskId": "t1", "status": "working", ttl_key: 600_000, poll_key: 500, key: value}
    expected = _outcome(lambda: _checked_task(obj, "tasks/get result", ttl_key, poll_key))
    assert _outcome(lambda: parse_task(obj, "tasks/get result", ttl_key=ttl_key, poll_key=poll_key)) == expected


# -- 3. a real Session ---------------------------------------------------------------------------------


class MemoryTransport(Transport):
    """A transport that only records what the session sends."""

    kind = "memory"
    label = "memory"

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def start(self, events: Any) -> None:
        pass

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.sent.append(message)

    async def close(self) -> None:
        pass


async def _feed(raw: list[bytes]) -> None:
    session = Session(MemoryTransport(), name="random-server", request_timeout=5)
    client = Client(session, Core2025Dialect(session), elicitation_handler=None, sampling_handler=None)
    handle = client.lifecycle._new_handle("job", {}, runs_as_task=True, token=TOKEN)
    control_of(handle).named("t1")
    client.tasks["t1"] = handle
    session.server_requests.add_progress_listener(TOKEN, control_of(handle).progress_reported)
    pending = [
        asyncio.ensure_future(session.request("tasks/get", {"taskId": "t1"}, timeout=None)) for _ in range(4)
    ]
    await asyncio.sleep(0)  # the requests are sent: ids 0..3 are pending
    try:
        for data in raw:
            try:
                messages = jsonrpc.decode(data)
            except jsonrpc.MessageError:
                continue  # a transport reports it as noise
            for message in messages:
                session.message_received(message)  # must not raise
            await asyncio.sleep(0)
        for future in pending:
            if future.done():
                error = future.exception()
                assert error is None or isinstance(error, MCPError), repr(error)
                if error is None:
                    assert isinstance(future.result(), dict)
    finally:
        for future in pending:
            future.cancel()
        await session.close()
        await asyncio.gather(*pending, return_exceptions=True)


@st.composite
def server_messages(draw: st.DrawFn) -> Any:
    """What a server sends a client: answers (mostly to the pending requests), notifications and requests."""
    kind = draw(st.sampled_from(["answer", "error", "notification", "request", "progress", "status", "envelope"]))
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind == "progress":
        progress = {"progressToken": draw(st.sampled_from([TOKEN, TOKEN, "other", 1])), "progress": draw(numbers)}
        for key, values in [("total", numbers), ("message", scalars)]:
            if draw(st.booleans()):
                progress[key] = draw(values)
        return {**msg, "method": "notifications/progress", "params": progress}
    if kind == "status":
        method = draw(st.sampled_from(["notifications/tasks/status", "notifications/tasks"]))
        return {**msg, "method": method, "params": {"taskId": "t1", **draw(task_objects())}}
    if kind in ("answer", "error", "request"):
        msg["id"] = draw(st.one_of(st.integers(0, 3), st.integers(-2, 10), st.text(max_size=3)))
    if kind == "answer":
        msg["result"] = draw(st.one_of(task_objects(), task_objects().map(lambda t: {"task": t}), json_values))
    elif kind == "error":
        msg["error"] = {"code": draw(st.one_of(st.integers(-33000, 0), numbers)), "message": draw(st.text())}
    elif kind in ("notification", "request"):
        msg["method"] = draw(st.sampled_from(METHODS))
        msg["params"] = draw(params())
    else:
        return draw(envelopes())
    return msg


@pytest.mark.timeout(90)
@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(
        st.one_of(
            server_messages().map(_dumps).map(str.encode), mutated(), json_values.map(_dumps).map(str.encode)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_a_session_survives_any_message(raw: list[bytes]) -> None:
    asyncio.run(asyncio.wait_for(_feed(raw), 20))
