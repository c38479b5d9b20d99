"""%mcp_tools' table (issue 30 item 6): a tool the server decides on per call says what its description
says of tasks, and a description's `code` is drawn as code, not as raw backticks."""

import pytest

from mcp_tasks_jupyter.jupyter.tables import task_support, tools_table
from mcp_tasks_jupyter.protocol.types import Tool


def decided_per_call(description: str) -> Tool:
    tool = Tool.model_validate({"name": "t", "description": description, "inputSchema": {"type": "object"}})
    tool.decided_per_call()
    return tool


@pytest.mark.parametrize(
    ("description", "shown"),
    [
        ("Researches a topic. Must be called as a task.", "server decides per call (described as a task)"),
        (
            "Returns the text at once. Cannot be called as a task.",
            "server decides per call (described as never a task)",
        ),
        ("Adds two numbers.", "server decides per call"),
    ],
)
def test_task_support_says_what_the_description_says(description: str, shown: str) -> None:
    assert task_support(decided_per_call(description)) == shown


def test_backticks_are_code_in_html_and_gone_from_text() -> None:
    table = tools_table("demo", [decided_per_call("With `ambiguous`, it <asks> first.")])
    assert "<code>ambiguous</code>" in table.html() and "&lt;asks&gt;" in table.html()
    assert "`" not in table.html() and "`" not in table.text()
    assert "With ambiguous, it <asks> first." in table.text()
