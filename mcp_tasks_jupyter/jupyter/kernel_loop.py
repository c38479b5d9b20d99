"""The browser's messages handled on the kernel's loop, whatever thread ipykernel hands them to.

JupyterLab sends a comm's messages over a kernel subshell of their own when the kernel has subshells (its
default setting, ``commsOverSubshells: perCommTarget``), and ipykernel 7 handles a comm's message on the
thread and event loop of the subshell its last message to the browser went out under. So once the kernel
has answered the browser from such a message (a refused answer's errors, a page of a sweep), the next
Cancel or answer runs on another thread, where the tasks, their futures and the runtime's jobs do not live:
a Cancel failed there ("connections belong to another event loop") and was lost. Each handler of the
browser's messages is wrapped here and runs on the loop the kernel's tasks live on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


def call_on(loop: asyncio.AbstractEventLoop | None, handler: Callable[..., Any], *args: Any) -> None:
    """``handler(*args)`` on ``loop``: now when that is the loop running here (or no loop runs here: plain
    code, or no loop to hand it to), else handed to ``loop``'s thread (a closed loop: dropped, the kernel is
    going)."""
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if loop is None or running is None or running is loop:
        handler(*args)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(handler, *args)


def on_kernel_loop(handler: Callable[..., Any]) -> Callable[..., None]:
    """``handler`` (a widget's ``on_msg`` handler), run on the loop running where it is registered (the
    kernel's, where the widget is made) whatever thread a message arrives on."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:  # made outside a loop (plain code): messages are handled where they arrive
        loop = None

    def run(*args: Any) -> None:
        call_on(loop, handler, *args)

    return run


__all__ = ["call_on", "on_kernel_loop"]
