"""Front-end messages per task widget, for a task whose server changes it 50 times a second.

    python benchmarks/widget_messages.py [--seconds S] [--tiny] [--json]

A real kernel (jupyter_client) runs ``h = %mcp_task demo:slow_compute seconds=S steps=50*S`` against
the demo server over Streamable HTTP (``--dialect 2025-11-25``, which pushes every change: per step
a status message, a progress notification and a log line, so 150 changes a second reach the
handle). The cell displays the live widget. Counted: the iopub ``comm_msg`` messages of that
widget's comm, from its ``comm_open`` until the task has ended (the final state included), divided
by the task's duration on the server (``createdAt`` to ``lastUpdatedAt``). The anchor is the number
of changes the handle saw per second (every status change, progress and log line).
Target: at most 10 messages a second.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, demo_server, emit, parser
from _kernel import running_kernel

TARGET_PER_S = 10.0
CHANGES_PER_S = 50

SETUP = """
%load_ext mcp_tasks_jupyter
import asyncio
from datetime import datetime
"""

CONNECT = "%mcp_connect --dialect 2025-11-25 demo {url}"

START = """
_changes = [0]
_h = %mcp_task demo:slow_compute seconds={seconds} steps={steps}
_h.on_change(lambda _: _changes.__setitem__(0, _changes[0] + 1))
"""

FINISH = """
await asyncio.wait_for(_h.wait(), {timeout})
await asyncio.sleep(0.5)  # anything still queued for the widget goes out
_span = (datetime.fromisoformat(_h.last_updated_at.replace("Z", "+00:00"))
         - datetime.fromisoformat(_h.created_at.replace("Z", "+00:00"))).total_seconds()
"""


def rows(seconds: float) -> list[Row]:
    steps = int(seconds * CHANGES_PER_S)
    with demo_server("--dialect", "2025-11-25") as url, running_kernel() as kernel:
        kernel.run(SETUP)
        kernel.run(CONNECT.format(url=url))
        mark = len(kernel.iopub)
        kernel.run(START.format(seconds=seconds, steps=steps))
        time.sleep(0.2)
        kernel.run(FINISH.format(timeout=seconds + 60))
        status, span, changes = kernel.value("(_h.status, _span, _changes[0])")
        time.sleep(0.2)
        kernel.drain_iopub()
        messages = kernel.iopub[mark:]
        opened = [
            m
            for m in messages
            if m["msg_type"] == "comm_open"
            and m["content"].get("data", {}).get("state", {}).get("tool") == "slow_compute"
        ]
        if status != "completed" or len(opened) != 1:
            raise RuntimeError(f"task {status}, {len(opened)} task widgets opened")
        comm_id = opened[0]["content"]["comm_id"]
        sent = sum(1 for m in messages if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id)
    per_s = sent / span
    return [
        Row(
            f"widget messages/s, {seconds:g} s task, {CHANGES_PER_S} steps/s",
            per_s,
            "changes the handle saw/s",
            changes / span,
            "msg/s",
            f"<= {TARGET_PER_S:g}/s",
            per_s <= TARGET_PER_S,
            note=f"widget: {sent} comm messages over the task's {span:.2f} s",
        )
    ]


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--seconds", type=float, default=None, help="task duration (default 10; 3 with --tiny)")
    args = p.parse_args()
    emit(rows(args.seconds or (3.0 if args.tiny else 10.0)), args.json)
