"""Closing an index the program dropped without closing it, off the garbage collector's back.

An index left unclosed is closed by its ``weakref.finalize``, which the cyclic collector may run at any
allocation, in the middle of any code, holding whatever locks that code holds. Closing an index submits to
its writer's thread pool, and every ``ThreadPoolExecutor.submit`` takes one lock shared by all pools: a
collection inside another pool's ``submit`` (a sweep's index write, say) closed a dropped index there and
waited forever for the lock its own thread held. So a finalizer only hands the close to this module's
thread (``queue.SimpleQueue.put`` is safe in a finalizer); at exit, what is still queued is closed before
the process ends, and a close asked for after that runs where it is asked (no code is interrupted then).
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: How long the process's exit waits for the queued closes (each bounded by its own database timeouts).
EXIT_WAIT_S = 10.0

_closes: queue.SimpleQueue[tuple[Callable[..., None], tuple[Any, ...]] | None] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_exiting = False
_start_lock = threading.Lock()


def ready() -> None:
    """Start the closing thread, if it is not running; called where an index is made (never by a finalizer)."""
    global _thread
    with _start_lock:
        if _thread is None and not _exiting:
            _thread = threading.Thread(target=_run, name="mtj-index-closer", daemon=True)
            _thread.start()
            atexit.register(_drain)


def close_later(close: Callable[..., None], *args: Any) -> None:
    """Run ``close(*args)`` on the closing thread; at once when there is none (the process is exiting).
    Safe in a ``weakref.finalize`` callback: it takes no lock the interrupted code may hold."""
    if _thread is None or _exiting:
        close(*args)
    else:
        _closes.put((close, args))


def _run() -> None:
    while (job := _closes.get()) is not None:
        close, args = job
        try:
            close(*args)
        except Exception:  # a close never stops the thread; what it could not write it has logged
            log.debug("closing a dropped task index failed", exc_info=True)


def _drain() -> None:
    """At exit: the closes queued so far run to their end (bounded), later ones run where they are asked."""
    global _exiting
    _exiting = True
    thread = _thread
    if thread is not None:
        _closes.put(None)
        thread.join(EXIT_WAIT_S)


__all__ = ["close_later", "ready"]
