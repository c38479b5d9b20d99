"""stdio faults with real child processes: missing command, early exit, garbage, stubborn shutdown."""

import asyncio
import sys
import textwrap

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.transport import StdioTransport, stdio

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

# A minimal line-based server: answers initialize (server/discover with method-not-found, as a legacy
# server does, so the client's probe does not wait), then behaves as MODE says.
SCRIPT = textwrap.dedent("""
    import json, os, sys, time, signal
    mode = sys.argv[1]
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "server/discover":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32601, "message": "Method not found"}}), flush=True)
        elif msg.get("method") == "initialize":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "script-" + mode}}}), flush=True)
        elif msg.get("method") == "tools/list":
            if mode == "garbage":
                print("this is not json", flush=True)
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
            elif mode == "die":
                sys.stderr.write("fatal: the database is on fire\\n"); sys.stderr.flush()
                sys.exit(7)
            else:
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
        if mode == "deaf" and msg.get("method") == "notifications/initialized":
            os.close(0)  # sys.stdin.close() would leave the descriptor open
            time.sleep(30)
        if mode == "stubborn" and msg.get("method") == "notifications/initialized":
            sys.stdin.close()
            while True:
                time.sleep(1)
""")


def argv(mode):
    return [sys.executable, "-c", SCRIPT, mode]


async def test_command_not_found_is_clear():
    with pytest.raises(mtj.ConnectionFailed, match="command not found: 'no-such-mcp-server'"):
        await mtj.connect("no-such-mcp-server --flag")


async def test_process_exiting_before_initialize_shows_its_stderr():
    cmd = [sys.executable, "-c", "import sys; sys.stderr.write('missing API key FOO\\n'); sys.exit(2)"]
    with pytest.raises(mtj.ServerExited, match=r"(?s)exited with code 2.*missing API key FOO") as info:
        await mtj.connect(cmd, timeout=10)
    assert info.value.returncode == 2


async def test_process_dying_mid_request_fails_it_with_stderr():
    async with mtj.connect(argv("die")) as client:
        assert client.name.startswith("script-die at ")
        with pytest.raises(mtj.ServerExited, match=r"(?s)script-die.*code 7.*database is on fire"):
            await asyncio.wait_for(client.list_tools(), 10)
        with pytest.raises(mtj.ServerExited):
            await client.list_tools(refresh=True)


async def test_garbage_lines_are_reported_and_skipped():
    async with mtj.connect(argv("garbage")) as client:
        assert await client.list_tools() == []
        assert "unreadable line" in str(client.session.last_noise)


async def test_env_reaches_the_server():
    cmd = [
        sys.executable,
        "-c",
        textwrap.dedent("""
        import json, os, sys
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("method") == "server/discover":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": -32601, "message": "Method not found"}}), flush=True)
            elif msg.get("method") == "initialize":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "serverInfo": {"name": os.environ["MTJ_NAME"]}}}), flush=True)
    """),
    ]
    async with mtj.connect(cmd, env={"MTJ_NAME": "from-env"}) as client:
        assert client.server_info.name == "from-env" and client.protocol_version == "2025-06-18"
        assert client.dialect.name == "none"


async def test_close_terminates_then_kills_a_stubborn_server(monkeypatch):
    monkeypatch.setattr(stdio, "SHUTDOWN_GRACE_S", 0.5)  # each step's wait; the server ignores them all
    transport = None
    async with mtj.connect(argv("stubborn")) as client:
        transport = client.transport
        assert isinstance(transport, StdioTransport)
    assert transport._proc.returncode == -9  # SIGTERM was ignored, so it had to be killed


async def test_a_server_that_closed_its_stdin_fails_the_next_request_at_once():
    # The process lives on, but nothing can reach it: the write finds the pipe closed (the transport
    # then asks drain(), which reports it), rather than the request waiting for its timeout.
    async with mtj.connect(argv("deaf")) as client:
        stdin = client.transport.process.stdin

        async def closed() -> None:  # until the loop has seen the pipe close
            while not stdin.is_closing():
                await asyncio.sleep(0.01)

        await asyncio.wait_for(closed(), 10)
        with pytest.raises(mtj.ServerExited, match="cannot write to the server process"):
            await asyncio.wait_for(client.list_tools(refresh=True), 10)


async def test_unsupported_protocol_version_is_refused():
    cmd = [
        sys.executable,
        "-c",
        textwrap.dedent("""
        import json, sys
        for line in sys.stdin:
            msg = json.loads(line)
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "old"}}}), flush=True)
    """),
    ]
    with pytest.raises(mtj.ProtocolError, match="speaks protocol '1999-01-01'"):
        await mtj.connect(cmd)
