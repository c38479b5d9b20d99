"""A JSON column of the task index read back: the object it holds, or None for none or anything else."""

from __future__ import annotations

import json
from typing import Any


def json_object(text: str | None) -> dict[str, Any] | None:
    """The JSON object ``text`` holds (None: empty, not JSON, or not an object)."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


__all__ = ["json_object"]
