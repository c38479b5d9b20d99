"""``python -m mcp_tasks_jupyter``: the ``mcp-tasks`` command line (``cli.py``)."""

from .exports.cli import main

raise SystemExit(main())
