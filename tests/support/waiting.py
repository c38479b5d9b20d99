"""Wait in async tests for something to become true, with a deadline."""

from __future__ import annotations

from collections.abc import Callable

import anyio


async def eventually(
    predicate: Callable[[], bool], *, timeout: float = 10.0, interval: float = 0.05, what: str = "condition"
) -> None:
    """Return once `predicate()` is true; raise TimeoutError after `timeout` seconds."""
    try:
        with anyio.fail_after(timeout):
            while not predicate():
                await anyio.sleep(interval)
    except TimeoutError:
        raise TimeoutError(f"{what} not reached within {timeout:g} s") from None
