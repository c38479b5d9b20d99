"""Env values given for a stdio server never show, even when the server writes them to stderr before
it dies or quotes them in its errors (the scripted fault server in a real child process)."""

from __future__ import annotations

import logging
import os

import pytest

import mcp_tasks_jupyter as mtj

from .conftest import stdio_argv
from .secrets_support import assert_hidden, new_secret, shown

pytestmark = pytest.mark.anyio


@pytest.mark.timeout(30)
async def test_a_server_dying_with_the_env_secret_on_stderr(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    secret = new_secret("env")
    client = await mtj.connect(
        stdio_argv("exit_mid_task"), env={"FAULT_SECRET": secret}, index=os.environ["MTJ_INDEX"]
    )
    try:
        handle = await client.start_task("job")
        with pytest.raises(mtj.TaskLost) as lost:
            await handle
        exited = lost.value.__cause__
        assert isinstance(exited, mtj.ServerExited) and exited.returncode == 3
        assert "fatal: could not use credential ***" in exited.stderr  # the rest of its last words stay
        assert "could not use credential ***" in str(lost.value)
        assert_hidden([secret], shown(client=client, handle=handle, exc=lost.value), caplog)
        # Asked again on the dead connection: the same scrubbed ServerExited.
        with pytest.raises(mtj.ConnectionFailed) as again:
            await client.session.request("tasks/list", {})
        assert_hidden([secret], shown(exc=again.value), caplog)
    finally:
        await client.aclose()


@pytest.mark.timeout(30)
async def test_a_server_quoting_the_env_secret_in_its_errors(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    secret = new_secret("env")
    client = await mtj.connect(
        stdio_argv("echo_secret_in_errors"), env={"FAULT_SECRET": secret}, index=os.environ["MTJ_INDEX"]
    )
    try:
        handle = await client.start_task("job")
        with pytest.raises(mtj.TaskFailed) as failed:
            await handle
        assert "backend refused key ***" in str(failed.value)
        assert_hidden([secret], shown(client=client, handle=handle, exc=failed.value), caplog)
    finally:
        await client.aclose()
