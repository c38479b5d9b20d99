"""Live task views for notebooks (anywidget): one task (:class:`TaskWidget`, made by :func:`bind`;
or on one line, :class:`CompactTaskWidget`, made by :func:`compact`, for cells that start many),
many tasks in a table (:class:`BoardWidget`), and one ``client.map`` batch as one view
(:class:`BatchWidget`). All coalesce updates; see ``coalesce.py``.
A task's question is drawn as a form in its TaskWidget (``question_form.py``; a question of no
task gets a :class:`QuestionWidget`); a sign-in waiting for a person is a :class:`SignInWidget`;
``registry.py`` knows which widgets follow which task."""

from .batch_widget import BatchWidget
from .board_widget import BoardWidget
from .compact_widget import CompactTaskWidget, compact
from .question_form import QuestionWidget
from .sign_in_widget import SignInWidget
from .task_widget import TaskWidget, bind

__all__ = [
    "BatchWidget",
    "BoardWidget",
    "CompactTaskWidget",
    "QuestionWidget",
    "SignInWidget",
    "TaskWidget",
    "bind",
    "compact",
]
