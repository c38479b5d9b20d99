"""Live task views for notebooks (anywidget): one task (:class:`TaskWidget`, made by :func:`bind`)
and many tasks in a table (:class:`BoardWidget`). Both coalesce updates; see ``coalesce.py``."""

from .board_widget import BoardWidget
from .task_widget import TaskWidget, bind

__all__ = ["BoardWidget", "TaskWidget", "bind"]
