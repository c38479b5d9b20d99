"""Wait in async tests for something to become true, with a deadline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")


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


@contextlib.asynccontextmanager
async def every_turn(observe: Callable[[], T]) -> AsyncIterator[list[T]]:
    """A task that takes every turn the running loop gives it while the block runs, and notes ``observe()`` at
    each (the list it yields starts with one note before the block): how work done in the block lets the loop
    run is counted, not timed."""
    seen = [observe()]
    stop = asyncio.Event()

    async def take_every_turn() -> None:
        while not stop.is_set():
            await asyncio.sleep(0)
            seen.append(observe())

    taker = asyncio.create_task(take_every_turn())
    await asyncio.sleep(0)
    try:
        yield seen
    finally:
        stop.set()
        await taker
