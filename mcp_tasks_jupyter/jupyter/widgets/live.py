"""What every live view of a task or a batch does the same way: follow its subject's changes
through a :class:`~.coalesce.Coalescer`, send only the traits that changed, answer the browser's
Cancel, and stop following once the subject ended or the view closed."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ...views.text import task_text
from ...views.view import view_of
from ..kernel_loop import on_kernel_loop
from ..runtime import get_runtime
from .coalesce import Coalescer

if TYPE_CHECKING:
    from ...tasks.handle import TaskHandle

log = logging.getLogger(__name__)


class LiveWidget:
    """Mixed into the anywidget views of one task, one task on one line and one batch (before
    ``anywidget.AnyWidget``). A view calls :meth:`_live_init` first in its ``__init__``, then
    ``super().__init__(**self._current_state(), ...)``, then :meth:`_follow` with its subject (a
    handle or a batch: ``on_change(callback)`` returns the unsubscribe). It says what its state is
    (:meth:`_current_state`), whether the subject ended (:meth:`_ended`), how to cancel it
    (:meth:`_cancel_subject`) and its ``text/plain`` (:meth:`_plain_text`)."""

    _coalescer: Coalescer

    def _live_init(self, interval: float) -> None:
        self._cancelling = False
        self._cancel_error = ""
        self._coalescer = Coalescer(self._flush, interval)
        self._unsubscribe: Callable[[], None] | None = None

    def _follow(self, subject: Any) -> None:
        widget: Any = self
        widget.on_msg(on_kernel_loop(self._on_front_end_msg))
        if not self._ended():
            self._unsubscribe = subject.on_change(self._on_change)

    # -- what each view says ---------------------------------------------------------------------

    def _current_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def _ended(self) -> bool:
        raise NotImplementedError

    def _cancel_subject(self) -> Coroutine[Any, Any, Any]:
        raise NotImplementedError

    def _plain_text(self) -> str:
        raise NotImplementedError

    def _on_other_msg(self, content: dict[str, Any]) -> None:
        """A custom message from the browser other than Cancel (none by default)."""

    # -- the same for every view -----------------------------------------------------------------

    @property
    def flushes(self) -> int:
        """How many state updates were sent (at most one comm message each)."""
        return self._coalescer.flushes

    def cancel(self) -> None:
        """What the Cancel button does: cancel in the background. Errors show up in the view
        (``cancel_error``, where it has one); nothing is raised here."""
        if self._ended() or self._cancelling:
            return
        self._cancelling, self._cancel_error = True, ""
        job = self._cancel()
        try:
            get_runtime().spawn(job, name=f"cancel {self!r}")
        except Exception as exc:  # no loop to run it on, or the runtime refused
            job.close()
            log.info("cancelling %r failed: %s", self, exc)
            self._cancelling, self._cancel_error = False, f"cancel failed: {exc}"
        self._coalescer.request(now=True)  # a click is answered at once (the button disables)

    def close(self) -> None:
        """Stop following and close the comm (the view disappears)."""
        self._stop_following()
        self._coalescer.cancel()
        super().close()  # type: ignore[misc]  # anywidget.AnyWidget's, after this mixin

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # Keep the live view; text/plain is the stable text (nbval compares it).
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if bundle is not None:
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/plain"] = self._plain_text()
        return bundle

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # The browser's Cancel button sends {"type": "cancel"} as a custom message.
        if not isinstance(content, dict):
            return
        if content.get("type") == "cancel":
            self.cancel()
        else:
            self._on_other_msg(content)

    def _on_change(self, _subject: Any) -> None:
        if self._ended():
            self._stop_following()
            self._coalescer.request(now=True)
        else:
            self._coalescer.request()

    def _stop_following(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _flush(self) -> None:
        widget: Any = self  # an anywidget.AnyWidget: comm, hold_sync and the traits
        if widget.comm is None:
            return  # closed
        changed = {k: v for k, v in self._current_state().items() if getattr(widget, k) != v}
        if not changed:
            return
        with widget.hold_sync():
            for name, value in changed.items():
                setattr(widget, name, value)
            widget.sent_at = time.time()

    async def _cancel(self) -> None:
        try:
            await self._cancel_subject()
        except Exception as exc:
            log.info("cancelling %r failed: %s", self, exc)
            self._cancel_error = f"cancel failed: {exc}"
        self._cancelling = False
        self._coalescer.request(now=True)


class LiveTaskView(LiveWidget):
    """A :class:`LiveWidget` of one task handle (``self._handle``): the task and the compact view."""

    _handle: TaskHandle

    @property
    def handle(self) -> TaskHandle:
        return self._handle

    def _ended(self) -> bool:
        return self._handle.done()

    def _cancel_subject(self) -> Coroutine[Any, Any, Any]:
        return self._handle.cancel()

    def _plain_text(self) -> str:
        return task_text(view_of(self._handle))
