"""A demo MCP server with long-running tools, speaking three task dialects.

Run it with ``python -m mcp_tasks_jupyter.demo``: over stdio by default (newline-delimited
JSON-RPC on stdin/stdout, logs on stderr), or over Streamable HTTP with ``--http``, when it
prints one line, ``MCP demo server listening on http://127.0.0.1:PORT/mcp``, once it accepts
connections. It is self-contained (the stdlib; starlette and uvicorn for HTTP, from the
``demo-http`` extra: ``pip install 'mcp-tasks-jupyter[demo-http]'``) and does not use the client
library in the rest of this package.

Dialects, chosen per client by what the client sends (``--dialect 2025-11-25|sep1686|ext``
serves one only; :mod:`.server` says how the choice is made):

``2025-11-25`` (:mod:`.protocol_2025`)
    ``initialize``, then task-augmented ``tools/call`` (``params.task``), ``tasks/get``,
    ``tasks/result``, ``tasks/cancel``, ``tasks/list``, ``notifications/tasks/status``.
``sep1686`` (:mod:`.protocol_sep1686`, the SEP-1686 draft)
    ``initialize`` declaring ``capabilities.tasks`` with boolean leaves, or any request carrying
    ``params._meta["modelcontextprotocol.io/task"] = {taskId, keepAlive}``: the client names the
    task, gets ``notifications/tasks/created`` and the ordinary answer at the end;
    ``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/delete``; cancel with
    ``notifications/cancelled``.
``ext`` (:mod:`.protocol_2026` + :mod:`.protocol_ext`: SEP-2663 on the stateless 2026-07-28 protocol)
    No ``initialize``; each request carries its ``_meta`` (version, capabilities, client info)
    and opts into tasks by declaring ``extensions["io.modelcontextprotocol/tasks"]``;
    ``server/discover``, ``resultType`` on every result, the server decides which calls become
    tasks, ``tasks/get`` (result, error or ``inputRequests`` inline), ``tasks/update``,
    ``tasks/cancel``, multi round-trip requests (:mod:`.mrtr`), ``subscriptions/listen`` with
    ``notifications/tasks``. Over HTTP it is stateless (no session id), with the
    ``Mcp-Method``/``Mcp-Name`` header checks.

Tools (durations are arguments, so tests and demos can be fast):

``slow_compute {seconds=5, steps=10, label="job"}`` (taskSupport optional)
    Advances in ``steps`` equal steps over ``seconds`` with a status message and progress at
    each; returns "label: done in N steps, value=V" and ``{label, steps, seconds, value}``
    (value = sum of squares of 1..steps).
``research {topic, ambiguous=false, stage_seconds=0.5}`` (taskSupport required)
    Stages searching, reading, synthesizing. With ``ambiguous`` it goes ``input_required``
    after the first stage and asks (``elicitation/create``) for an ``interpretation`` (one of
    "<topic> (history|technology|economics)") and an optional ``depth`` 1-5; a client without
    the elicitation capability gets the first reading, and the report says so. Decline or
    cancel fails the task ("The user declined ..."). Returns a markdown report and
    ``{topic, interpretation, depth, sources}``.
``failing_job {seconds=0.5, mode="tool_error"|"protocol_error", message}`` (optional)
    Fails after ``seconds``: a result with ``isError`` (task ``failed`` in 2025-11-25,
    ``completed`` in sep1686 and ext), or the JSON-RPC error ``{code: -32603, message, data:
    {reason: "demo"}}`` (task ``failed``).
``make_chart {values, title="Chart", seconds=0.2}`` (optional)
    A 480x270 PNG bar chart (image block), a summary line and ``{title, count, min, max, mean}``.
``echo {text}`` (no ``execution`` field: tasks forbidden)
    Returns the text at once.

The tests run it with more tools (a fault tool, the conformance suite's fixtures): see
tests/support/demo_server.py.

Flags: ``--http``, ``--host`` (127.0.0.1), ``--port`` (0 = a free port), ``--poll-interval MS``
(500, at least 100), ``--default-ttl MS`` (600000), ``--max-ttl MS`` (3600000),
``--tools-page-size N`` (100), ``--tasks-page-size N`` (50), ``--dialect`` (auto),
``--no-status-notifications``, ``--no-batch-scheduling``, ``--log-level`` (warning). With ``--http``:
``--auth`` (an OAuth 2.1 protected ``/mcp`` and an authorization server of its own, :mod:`.auth_http`),
``--token-ttl SECONDS`` (3600), ``--auth-scopes "S ..."`` ("mcp:tools offline_access"),
``--auth-tool-scope TOOL=SCOPE``, ``--auth-client-id ID`` and
``--auth-client-secret SECRET`` (a pre-registered client),
``--auth-device-interval SECONDS`` (5), ``--auth-device-ttl SECONDS`` (600) and ``--auth-device-slow-down``
(the device authorization grant).

Behaviour and limits:

* On Linux the server runs under the ``SCHED_BATCH`` policy (``--no-batch-scheduling`` keeps the normal
  one): the same share of the CPU, but it never preempts the process that woke it. A notebook kernel on the
  same machine otherwise lost its core to the server at nearly every request it sent (1.7 times per item of a
  sweep, 0.7 ms of waiting per item), and its cells waited behind the server's work.
* A 2025-11-25 task's ``ttl`` counts from creation; requests are clamped to [1000, max-ttl] ms
  and a missing or null ttl gets the default. An ext task gets the default ttl (``ttlMs``),
  from creation. A sep1686 ``keepAlive`` is clamped the same way but counts from the task's
  end. Expired tasks are purged lazily (their bodies cancelled); ``tasks/get`` then answers
  -32602 ("Task has expired").
* Task ids the server makes are 128-bit random (``secrets.token_urlsafe(16)``); sep1686 clients
  choose theirs, and the server refuses ids shorter than 16 characters or ever used before.
* Poll pacing: every task advertises the ``--poll-interval`` (at least 100 ms) as
  ``pollInterval`` / ``pollIntervalMs`` / ``pollFrequency``. Faster polls are answered normally
  (no rate limiting): the interval is advice. (The conformance suite polls every 200 ms.)
* Tasks live in one store shared by every session of the process, so a reconnecting client
  can still find them; each dialect sees only the tasks made in that dialect. There is no
  authorisation: anyone who can reach the server can read a task whose id they know, and
  ``tasks/list`` (2025-11-25, sep1686) shows every task of its dialect (ext has no list). The
  HTTP transport binds to 127.0.0.1 by default and rejects non-loopback ``Origin`` headers.
* ``tasks/list`` is in creation order, oldest first, with opaque cursors.
* 2025-11-25: every status or status message change sends ``notifications/tasks/status`` (none
  with ``--no-status-notifications``: clients then learn of changes by polling only); a
  call with ``_meta.progressToken`` gets ``notifications/progress``; the slow tools log each
  stage as ``notifications/message`` (logger "demo", level info). sep1686 sends the same
  progress and log messages (with its own related-task key) but no status notifications; ext
  sends progress and log messages only with an inline request that asked for them, and task
  changes only on ``subscriptions/listen``.
* 2025-11-25 ``tasks/result`` blocks until the task ends and returns the tool result (with
  ``io.modelcontextprotocol/related-task`` in ``_meta``) or the call's JSON-RPC error; a
  cancelled task answers -32800 "Task was cancelled".
* Over HTTP, messages about a task go to an open ``tasks/result`` stream (sep1686: the
  task-augmented ``tools/call`` stream) for that task, else the standalone GET stream;
  ``elicitation/create`` waits in a queue until one of them is open. Each session keeps its
  last 1000 SSE events for ``Last-Event-ID`` resumption. Sessions live until DELETE or server
  exit.
* A task's question (``elicitation/create``) goes to the session that started the task. A
  ``tasks/result`` for that task from another session that declared elicitation (say, a
  client reconnecting after a kernel restart) retracts it there and asks it again on its own
  stream; if the asking session ends, the question waits for such a session (or the ttl).
* Server-to-client request ids are integers counting from 0 (legacy sessions; ext never sends
  requests: its questions are ``inputRequests``).
"""

import sys


def server_command(*args: str) -> list[str]:
    """The command line that starts the demo server with this interpreter, plus ``args``."""
    return [sys.executable, "-m", "mcp_tasks_jupyter.demo", *args]


__all__ = ["server_command"]
