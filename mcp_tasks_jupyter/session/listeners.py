"""Telling a connection's listeners (a lost connection, reconnecting, the push channel): each is called in
turn, and one that raises is logged and never keeps the news from the others."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)


def tell(listeners: Sequence[Callable[..., Any]], *args: Any, what: str) -> None:
    """Call each of ``listeners`` (a copy: one may unsubscribe) with ``args``; ``what`` names them in a log."""
    for listener in list(listeners):
        try:
            listener(*args)
        except Exception:  # a listener's bug must not hide the news from the others
            log.exception("%s listener failed", what)
