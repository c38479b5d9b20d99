"""The timers code arms on the running loop, counted through the loop's public ``call_at`` (which
``call_later`` and ``asyncio.sleep`` go through too), not read from the loop's private heap."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def counting_timers(loop: asyncio.AbstractEventLoop | None = None) -> Iterator[Callable[[], list[Any]]]:
    """Within the block, every timer armed on ``loop`` (the running one) is kept; the function given
    returns those still to ring: neither cancelled nor past their time."""
    loop = loop or asyncio.get_running_loop()
    armed: list[asyncio.TimerHandle] = []
    call_at = loop.call_at

    def counted(when: float, callback: Callable[..., Any], *args: Any, context: Any = None) -> asyncio.TimerHandle:
        handle = call_at(when, callback, *args, context=context)
        armed.append(handle)
        return handle

    loop.call_at = counted  # type: ignore[method-assign]
    try:
        yield lambda: [h for h in armed if not h.cancelled() and h.when() > loop.time()]
    finally:
        del loop.call_at  # the instance attribute goes; the class's method is back
