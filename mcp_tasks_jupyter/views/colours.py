"""The one palette of task statuses in the kernel's static HTML: a badge's background and the text on
it, for every status of ``tasks/status.py`` (``STATUSES``).

The live views draw with the front end's twin, ``labextension/src/widgets/status.css`` (``--mtj-s-NAME``
and ``--mtj-s-NAME-text``; ``error`` and ``declined`` take the failure's colours there):
``tests/views/test_status_colours.py`` reads that file and holds the two equal, status by status, so a saved
summary's badge has the colour the live widget had.
"""

from __future__ import annotations

#: Badge colours (background, text) per status; anything else looks like ``unknown``.
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "queued": ("#d0d7de", "#1f2328"),
    "working": ("#0969da", "#ffffff"),
    "submitted": ("#54aeff", "#0b1f33"),
    "input_required": ("#d4a72c", "#1f1600"),
    "completed": ("#1a7f37", "#ffffff"),
    "error": ("#cf222e", "#ffffff"),
    "declined": ("#cf222e", "#ffffff"),
    "failed": ("#cf222e", "#ffffff"),
    "cancelled": ("#6e7781", "#ffffff"),
    "expired": ("#8250df", "#ffffff"),
    "lost": ("#bc4c00", "#ffffff"),
    "unknown": ("#8c959f", "#1f2328"),
}
#: Text that says something failed (a failure's words, a tool error's heading): the failure's colour.
FAILURE_TEXT = STATUS_COLOURS["failed"][0]


def badge_colours(status: str) -> tuple[str, str]:
    """(background, text) of ``status``'s badge; an unknown status's for any other."""
    return STATUS_COLOURS.get(status, STATUS_COLOURS["unknown"])


__all__ = ["FAILURE_TEXT", "STATUS_COLOURS", "badge_colours"]
