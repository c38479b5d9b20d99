"""The main job on the bundled demo server, from a terminal: ``python -m mcp_tasks_jupyter.demo.walkthrough``.

Starts the demo server over stdio, launches four tasks at once (a computation with progress, a research
job that asks which reading of its topic to follow, a chart, a job that fails), prints each change of
status as it happens while the tasks run side by side, then prints what came back. Exit code 0 when
every task ended as expected.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import mcp_tasks_jupyter as mtj


def _line(started: float, handle: mtj.TaskHandle) -> str:
    progress = ""
    if handle.progress and handle.progress.fraction is not None:
        progress = f" {handle.progress.fraction:4.0%}"
    return (
        f"{time.monotonic() - started:6.2f}s  {handle.tool:<13} {handle.status:<15}{progress:>5}  "
        f"{handle.status_message or ''}"
    )


async def choose_interpretation(params: dict[str, Any]) -> dict[str, Any]:
    """Answer the research job's question the way a person might: take the second reading."""
    field = params["requestedSchema"]["properties"]["interpretation"]
    choices = [option["const"] for option in field.get("oneOf", [])] or field.get("enum", [])
    answer = choices[1] if len(choices) > 1 else choices[0]
    print(f"          the server asks: {params['message']}\n          we answer: {answer}")
    return {"action": "accept", "content": {"interpretation": answer, "depth": 3}}


async def main(speed: float) -> int:
    command = [sys.executable, "-m", "mcp_tasks_jupyter.demo", "--poll-interval", "250"]
    async with mtj.connect(command, elicitation_handler=choose_interpretation) as client:
        info = client.describe()
        print(
            f"connected to {info['server']} {info['version']} over {info['transport']}: protocol "
            f"{info['protocol']}, task dialect {info['dialect']}"
        )
        for tool in await client.list_tools():
            print(f"  tool {tool.name:<13} tasks: {tool.task_support or 'per call':<9} {tool.description or ''}")
        started = time.monotonic()
        tasks = {
            "compute": await client.start_task("slow_compute", {"seconds": 3 * speed, "steps": 6}),
            "research": await client.start_task(
                "research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.8 * speed}
            ),
            "chart": await client.start_task(
                "make_chart", {"values": [3, 1, 4, 1, 5, 9, 2, 6], "title": "Digits of pi", "seconds": speed}
            ),
            "failing": await client.start_task(
                "failing_job",
                {"seconds": 1.5 * speed, "mode": "protocol_error", "message": "the upstream API said no"},
            ),
        }
        print(f"started {len(tasks)} tasks; the terminal stays free while they run:")
        last: dict[int, str] = {}

        def show(handle: mtj.TaskHandle) -> None:
            key = f"{handle.status}|{handle.status_message}"
            if last.get(id(handle)) != key:  # progress ticks alone are not worth a line
                last[id(handle)] = key
                print(_line(started, handle))

        for handle in tasks.values():
            handle.on_change(show)
        outcomes = await asyncio.gather(*tasks.values(), return_exceptions=True)

        print("\nresults:")
        ok = True
        for (name, handle), outcome in zip(tasks.items(), outcomes, strict=True):
            if isinstance(outcome, mtj.ToolResult):
                kinds = ", ".join(block.type for block in outcome.content)
                print(
                    f"  {name:<9} {handle.status:<10} {handle.elapsed:5.2f}s  [{kinds}] "
                    f"structured={outcome.structured}"
                )
            else:
                print(
                    f"  {name:<9} {handle.status:<10} {handle.elapsed:5.2f}s  {type(outcome).__name__}: "
                    f"{getattr(outcome, 'status_message', outcome)}"
                )
        research = outcomes[1]
        ok = (
            isinstance(outcomes[0], mtj.ToolResult)
            and isinstance(research, mtj.ToolResult)
            and "tides (technology)" in research.text
            and isinstance(outcomes[2], mtj.ToolResult)
            and isinstance(outcomes[3], mtj.TaskFailed)
        )
        if isinstance(research, mtj.ToolResult):
            print("\n" + research.text)
        print("\nall tasks ended as expected" if ok else "\nSOME TASKS DID NOT END AS EXPECTED")
        return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", type=float, default=1.0, help="scale every duration (0.1 = ten times faster)")
    sys.exit(asyncio.run(main(parser.parse_args().speed)))
