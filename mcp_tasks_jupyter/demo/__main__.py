"""Command line: ``python -m mcp_tasks_jupyter.demo [--http [--host H] [--port N]] ...``.

See the package docstring (``mcp_tasks_jupyter.demo``) for the tools, the flags and the limits.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable

from .auth_server import AuthSettings, parse_scopes, parse_tool_scopes
from .options import DIALECTS, DemoConfig
from .server import DemoServer

EPILOG = """\
dialects (chosen per client unless --dialect forces one):
  2025-11-25  initialize, then params.task on tools/call; tasks/get|result|cancel|list
  sep1686     initialize declaring capabilities.tasks with boolean leaves, or a request carrying
              params._meta["modelcontextprotocol.io/task"] = {taskId, keepAlive}: the client
              names the task; tasks/get|result|list|delete; cancel with notifications/cancelled
  ext         no initialize: every request carries _meta io.modelcontextprotocol/protocolVersion
              (2026-07-28) and clientCapabilities; the tasks extension (SEP-2663) when a request
              declares extensions["io.modelcontextprotocol/tasks"]; tasks/get|update|cancel;
              server/discover; questions as multi round-trip requests; subscriptions/listen

tools (durations are arguments):
  slow_compute  {seconds=5, steps=10, label}        tasks optional; progress at each step
  research      {topic, ambiguous=false, stage_seconds=0.5}
                                                    tasks required; may ask a question (elicitation)
  failing_job   {seconds=0.5, mode=tool_error|protocol_error, message}
                                                    tasks optional
  make_chart    {values, title="Chart", seconds=0.2} tasks optional; a PNG bar chart
  echo          {text}                              no tasks

oauth (--http --auth): /mcp needs "Authorization: Bearer TOKEN" from the demo's own authorization
  server on the same origin (issuer http://HOST:PORT), which approves every request at once:
  GET  /.well-known/oauth-protected-resource[/mcp]  protected resource metadata (RFC 9728)
  GET  /.well-known/oauth-authorization-server      authorization server metadata (RFC 8414)
  POST /register                                    dynamic client registration (RFC 7591)
  GET  /authorize                                   302 to the redirect URI with code, state, iss
  POST /token                                       authorization_code (PKCE S256), refresh_token,
                                                    client_credentials (--auth-client-id with a secret),
                                                    the device code grant (RFC 8628)
  POST /device_authorization                        a device code and a user code to enter
  GET  /device?user_code=CODE[&deny=1]              approves the code at once (or refuses it)
  a refresh token comes with the offline_access scope (for clients registering that grant type);
  tokens live in memory only, and are never logged. With --auth-dpop (RFC 9449) every token request
  needs a DPoP proof, tokens are "DPoP" tokens bound to its key and /mcp wants "Authorization: DPoP
  TOKEN" with a proof per request (--auth-dpop-nonce: proofs must carry the server's DPoP-Nonce).

limits: a task ttl (2025-11-25) or keepAlive (sep1686) is clamped to [1000, --max-ttl] ms, a
missing one is --default-ttl; ext tasks get --default-ttl. ttl counts from creation, keepAlive
from the task's end; then the task is gone (-32602). Task ids are 128 random bits; sep1686
clients choose theirs and must use 16 to 256 characters (a UUID4). The poll interval is at
least 100 ms; faster polls are answered normally (no rate limit), the interval is only
advertised. Tasks are shared by every session of the process and not access-controlled (a
2025-11-25 or sep1686 client can list every task of its dialect); HTTP binds to 127.0.0.1
unless --host says otherwise.
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the demo server."""
    parser = argparse.ArgumentParser(
        prog="python -m mcp_tasks_jupyter.demo",
        description="Demo MCP server with long-running tools and tasks, in three dialects "
        "(2025-11-25, sep1686, and ext: the tasks extension on 2026-07-28).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on /mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="HTTP port (default 0: a free port)")
    parser.add_argument(
        "--poll-interval",
        type=int,
        default=500,
        metavar="MS",
        help="poll interval advertised on tasks, at least 100 (default 500)",
    )
    parser.add_argument(
        "--default-ttl",
        type=int,
        default=600_000,
        metavar="MS",
        help="ttl of a task whose request names none (default 600000)",
    )
    parser.add_argument(
        "--max-ttl",
        type=int,
        default=3_600_000,
        metavar="MS",
        help="largest ttl granted; requests are clamped to [1000, max] (default 3600000)",
    )
    parser.add_argument(
        "--tools-page-size", type=int, default=100, metavar="N", help="tools per tools/list page (default 100)"
    )
    parser.add_argument(
        "--tasks-page-size", type=int, default=50, metavar="N", help="tasks per tasks/list page (default 50)"
    )
    parser.add_argument(
        "--dialect",
        default="auto",
        choices=DIALECTS,
        help="serve only this task dialect (default auto: each client in the one it speaks)",
    )
    parser.add_argument(
        "--no-status-notifications",
        dest="status_notifications",
        action="store_false",
        help="send no notifications/tasks/status (2025-11-25): clients see changes only by polling",
    )
    parser.add_argument(
        "--no-batch-scheduling",
        dest="batch_scheduling",
        action="store_false",
        help="keep the normal scheduling policy (default on Linux: SCHED_BATCH, so that this server never "
        "preempts the notebook kernel it serves on a shared core)",
    )
    parser.add_argument(
        "--listen-for",
        type=int,
        default=None,
        metavar="MS",
        help="end each subscriptions/listen gracefully (with its result) after MS ms (default: never)",
    )
    auth = parser.add_argument_group("OAuth (with --http)")
    auth.add_argument(
        "--auth",
        action="store_true",
        help="protect /mcp with OAuth 2.1: Bearer tokens from the demo's own authorization server",
    )
    auth.add_argument(
        "--token-ttl",
        type=int,
        default=3600,
        metavar="SECONDS",
        help="lifetime of an access token, at least 1 (default 3600)",
    )
    auth.add_argument(
        "--auth-scopes",
        default="mcp:tools offline_access",
        metavar='"S1 S2"',
        help="scopes the authorization server grants; every request needs all of them but "
        'offline_access (default "mcp:tools offline_access")',
    )
    auth.add_argument(
        "--auth-tool-scope",
        action="append",
        default=[],
        metavar="TOOL=SCOPE",
        help="a tools/call of TOOL also needs SCOPE (403 insufficient_scope without it); repeatable",
    )
    auth.add_argument(
        "--auth-client-id",
        metavar="ID",
        help="a pre-registered client (besides dynamic registration): any loopback redirect URI",
    )
    auth.add_argument(
        "--auth-client-secret",
        metavar="SECRET",
        help="its secret (Basic or post at the token endpoint); without one it is a public client",
    )
    auth.add_argument(
        "--auth-device-interval",
        type=int,
        default=5,
        metavar="SECONDS",
        help="the device grant's polling interval, 1 to 60; sooner polls get slow_down (default 5)",
    )
    auth.add_argument(
        "--auth-device-ttl",
        type=int,
        default=600,
        metavar="SECONDS",
        help="how long a device code waits for its person, 1 to 3600 (default 600)",
    )
    auth.add_argument(
        "--auth-device-slow-down",
        action="store_true",
        help="answer the first poll of each device code with slow_down (to try a client's back-off)",
    )
    auth.add_argument(
        "--auth-dpop",
        action="store_true",
        help="DPoP-bound tokens only (RFC 9449): a proof with every token request and every /mcp request",
    )
    auth.add_argument(
        "--auth-dpop-nonce",
        action="store_true",
        help="with --auth-dpop: proofs must carry the server's nonce (use_dpop_nonce + DPoP-Nonce first)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="stderr log level (default warning)",
    )
    return parser


#: What ``--http`` needs beyond the package's own dependencies: the ``demo-http`` extra.
HTTP_MODULES = ("starlette", "uvicorn")
MISSING_HTTP = (
    "the demo's HTTP mode needs {module}, which is not installed: "
    "pip install 'mcp-tasks-jupyter[demo-http]' (or run the demo over stdio, without --http)"
)


def _auth_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> AuthSettings | None:
    """The ``--auth`` settings, None without ``--auth``; a usage error when they do not make sense."""
    if not args.auth:
        return None
    if not args.http:
        parser.error("--auth needs --http (over stdio a server takes its credentials from the environment)")
    try:
        return AuthSettings(
            token_ttl=args.token_ttl,
            scopes=parse_scopes(args.auth_scopes),
            tool_scopes=parse_tool_scopes(args.auth_tool_scope),
            client_id=args.auth_client_id,
            client_secret=args.auth_client_secret,
            device_interval=args.auth_device_interval,
            device_ttl=args.auth_device_ttl,
            device_slow_down=args.auth_device_slow_down,
            dpop=args.auth_dpop,
            dpop_nonce=args.auth_dpop_nonce,
        )
    except ValueError as exc:
        parser.error(str(exc))


def main(argv: list[str] | None = None, *, make_server: Callable[[DemoConfig], DemoServer] = DemoServer) -> int:
    """Run the server until stdin closes (stdio) or SIGINT/SIGTERM (HTTP); the exit code.

    ``make_server`` builds the server from the configuration (tests add tools that way).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error("--port must be between 0 and 65535")
    try:
        config = DemoConfig(
            poll_interval_ms=args.poll_interval,
            default_ttl_ms=args.default_ttl,
            max_ttl_ms=args.max_ttl,
            tools_page_size=args.tools_page_size,
            tasks_page_size=args.tasks_page_size,
            dialect=args.dialect,
            status_notifications=args.status_notifications,
            listen_for_ms=args.listen_for,
        )
    except ValueError as exc:
        parser.error(str(exc))
    auth = _auth_settings(parser, args)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s mcp-demo %(levelname)s %(message)s",
    )
    if args.batch_scheduling:
        _behind_interactive_work()
    server = make_server(config)
    try:
        if args.http:
            try:
                from .http_server import serve_http  # starlette and uvicorn only when needed
            except ModuleNotFoundError as exc:
                missing = (exc.name or "").partition(".")[0]
                if missing not in HTTP_MODULES:
                    raise
                print(MISSING_HTTP.format(module=missing), file=sys.stderr)
                return 2

            try:
                return asyncio.run(serve_http(server, args.host, args.port, auth=auth))
            except OSError as exc:  # e.g. the port is taken
                print(f"cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
                return 1
        from .stdio_server import serve_stdio

        asyncio.run(serve_stdio(server))
        return 0
    except KeyboardInterrupt:
        return 0


def _behind_interactive_work() -> None:
    """Ask Linux to run this process as a batch job (``SCHED_BATCH``): the same share of the CPU, but waking up
    does not preempt the process that woke it. A client on the same machine (a notebook kernel sending 64
    requests at a time) would otherwise lose its core to this server at nearly every request it sends, and its
    cells would wait behind the server's work. Best effort: elsewhere, or refused, the policy stays."""
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is None:
        return
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))
    except OSError as exc:
        logging.getLogger(__name__).debug("the batch scheduling policy was refused: %s", exc)


if __name__ == "__main__":
    sys.exit(main())
