"""A demo MCP server with long-running tools, speaking the 2025-11-25 protocol with tasks.

Run it with ``python -m mcp_tasks_jupyter.demo``: over stdio by default (newline-delimited
JSON-RPC on stdin/stdout, logs on stderr), or over Streamable HTTP with ``--http``, when it
prints one line, ``MCP demo server listening on http://127.0.0.1:PORT/mcp``, once it accepts
connections. It is self-contained (stdlib, starlette, uvicorn) and does not use the client
library in the rest of this package.

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
    Fails after ``seconds``: a result with ``isError`` (task ``failed``), or the JSON-RPC error
    ``{code: -32603, message, data: {reason: "demo"}}``.
``make_chart {values, title="Chart", seconds=0.2}`` (optional)
    A 480x270 PNG bar chart (image block), a summary line and ``{title, count, min, max, mean}``.
``echo {text}`` (no ``execution`` field: tasks forbidden)
    Returns the text at once.
``exit_process {after_seconds=0.5, code=3}`` (optional; only with ``--faults``)
    Writes "demo server exiting on purpose" to stderr and ends the process with ``code``.

Flags: ``--http``, ``--host`` (127.0.0.1), ``--port`` (0 = a free port), ``--poll-interval MS``
(500), ``--default-ttl MS`` (600000), ``--max-ttl MS`` (3600000), ``--tools-page-size N``
(100), ``--tasks-page-size N`` (50), ``--faults``, ``--log-level`` (warning).

Behaviour and limits:

* A task's ``ttl`` counts from creation; requests are clamped to [1000, max-ttl] ms and a
  missing or null ttl gets the default. Expired tasks are purged lazily (their bodies
  cancelled); ``tasks/get`` then answers -32602 "Task has expired: <id>".
* Tasks live in one store shared by every session of the process, so a reconnecting client
  can still find them. There is no authorisation: anyone who can reach the server can list
  and read every task (task ids are 128-bit random, but ``tasks/list`` shows them all). The
  HTTP transport binds to 127.0.0.1 by default and rejects non-loopback ``Origin`` headers.
* ``tasks/list`` is in creation order, oldest first, with opaque cursors.
* Every status or status message change sends ``notifications/tasks/status``; a call with
  ``_meta.progressToken`` gets ``notifications/progress``; the slow tools log each stage as
  ``notifications/message`` (logger "demo", level info).
* ``tasks/result`` blocks until the task ends and returns the tool result (with
  ``io.modelcontextprotocol/related-task`` in ``_meta``) or the call's JSON-RPC error; a
  cancelled task answers -32800 "Task was cancelled".
* Over HTTP, messages about a task go to an open ``tasks/result`` stream for that task, else
  the standalone GET stream; ``elicitation/create`` waits in a queue until one of them is
  open. Each session keeps its last 1000 SSE events for ``Last-Event-ID`` resumption.
  Sessions live until DELETE or server exit.
* A task's question (``elicitation/create``) goes to the session that started the task. A
  ``tasks/result`` for that task from another session that declared elicitation (say, a
  client reconnecting after a kernel restart) retracts it there and asks it again on its own
  stream; if the asking session ends, the question waits for such a session (or the ttl).
* Server-to-client request ids are integers counting from 0.
"""

import sys


def server_command(*args: str) -> list[str]:
    """The command line that starts the demo server with this interpreter, plus ``args``."""
    return [sys.executable, "-m", "mcp_tasks_jupyter.demo", *args]


__all__ = ["server_command"]
