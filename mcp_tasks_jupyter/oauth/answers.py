"""Where a sign-in's answer arrives: the authorization server's redirect, however it reaches the kernel.

A person's sign-in ends with the browser sent to the ``redirect_uri`` with ``code``, ``state`` and (RFC
9207) ``iss``. That answer reaches the waiting sign-in by one of these ways, all through
:meth:`AwaitedAnswer.offer`, the one place that checks ``state``:

- the loopback listener on the kernel's 127.0.0.1 (``loopback.py``), when the browser is on the
  kernel's machine;
- pasted by the person (:func:`finish_sign_in`, the sign-in widget's field, ``%mcp_login NAME --paste
  ADDRESS``): the browser could not reach the kernel's loopback (JupyterHub, Binder, a server behind
  SSH, VS Code or Colab on another machine) and ended on a page that did not load; its address holds
  the answer.

An answer whose ``state`` is not the one this sign-in sent is refused (the sign-in goes on waiting);
one that matches is handed to the sign-in, which checks ``iss`` against the authorization server's
issuer (``mechanics.code_from``) before the code is exchanged. Whoever pasted an address learns how
the sign-in ended (:meth:`AwaitedAnswer.outcome`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlsplit

from ..errors import SignInFailed, UsageError

#: A pasted address longer than this is not a sign-in answer (bounds what is parsed).
MAX_ADDRESS_CHARS = 16 * 1024
#: How long whoever pasted an answer waits for the sign-in to end (the code exchange; bounded).
OUTCOME_WAIT_S = 60.0
#: The sign-ins waiting for an answer in this process, newest last.
_waiting: list[AwaitedAnswer] = []


class AwaitedAnswer:
    """One sign-in's wait for its authorization response (``state`` is the one the sign-in sent)."""

    def __init__(self, state: str, server: str) -> None:
        self.state = state
        self.server = server
        loop = asyncio.get_running_loop()
        self._answer: asyncio.Future[dict[str, str]] = loop.create_future()
        self._outcome: asyncio.Future[str] = loop.create_future()

    def offer(self, params: Mapping[str, str]) -> None:
        """Hand the redirect's query parameters to the sign-in; SignInFailed when they belong to another
        sign-in (``state`` differs) or the sign-in already has its answer."""
        if params.get("state") != self.state:
            raise SignInFailed(
                "this answer does not belong to the sign-in that is waiting (state differs): "
                "use the address of the last sign-in you started",
                server=self.server,
            )
        if self._answer.done():
            raise SignInFailed("this sign-in already has its answer", server=self.server)
        self._answer.set_result(dict(params))

    async def wait(self, timeout: float) -> dict[str, str]:
        """The answer's parameters; SignInFailed when none came within ``timeout`` seconds."""
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), timeout)
        except TimeoutError:
            raise SignInFailed(
                f"nobody signed in within {timeout:g} s; sign in again with %mcp_login NAME (or reconnect)",
                server=self.server,
            ) from None

    def settle(self, failure: SignInFailed | None) -> None:
        """How the sign-in ended (told to whoever pasted the answer)."""
        if self._outcome.done():
            return
        if failure is None:
            self._outcome.set_result(f"signed in to {self.server}")
        else:
            self._outcome.set_exception(failure)
            self._outcome.exception()  # nobody may be waiting: not an "exception never retrieved"

    async def outcome(self) -> str:
        """``"signed in to NAME"`` once the code was exchanged; SignInFailed saying why it was not."""
        try:
            return await asyncio.wait_for(asyncio.shield(self._outcome), OUTCOME_WAIT_S)
        except TimeoutError:
            raise SignInFailed(
                f"the sign-in did not end within {OUTCOME_WAIT_S:g} s of the answer", server=self.server
            ) from None

    def __enter__(self) -> AwaitedAnswer:
        _waiting.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self in _waiting:
            _waiting.remove(self)


def answer_params(address: str) -> dict[str, str]:
    """The query parameters of the address a browser ended on (UsageError when it carries no answer)."""
    address = address.strip() if isinstance(address, str) else ""
    if not address or len(address) > MAX_ADDRESS_CHARS or not address.isprintable():
        raise UsageError(
            f"paste the whole address your browser ended on (at most {MAX_ADDRESS_CHARS} characters, "
            "one line), e.g. http://127.0.0.1:PORT/callback?code=...&state=..."
        )
    try:
        query = urlsplit(address).query
    except ValueError:
        raise UsageError("the pasted text is not an address (URL)") from None
    params = dict(parse_qsl(query, keep_blank_values=True))
    if "state" not in params or not ({"code", "error"} & set(params)):
        raise UsageError(
            "the pasted address carries no sign-in answer (no state, or neither code nor error): paste the "
            "address of the page you ended on after signing in, not the sign-in link"
        )
    return params


def waiting_sign_in(server: str | None = None) -> AwaitedAnswer:
    """The sign-in waiting for an answer (the newest one to ``server`` when given); UsageError when none."""
    candidates = [w for w in _waiting if server is None or w.server == server]
    if not candidates:
        where = f" to {server}" if server is not None else ""
        raise UsageError(f"no sign-in{where} is waiting for an answer: connect (or %mcp_login NAME) first")
    if server is None and len({w.server for w in candidates}) > 1:
        names = ", ".join(sorted({w.server for w in candidates}))
        raise UsageError(f"sign-ins to {names} are waiting: say which server the address is for")
    return candidates[-1]


async def finish_sign_in(address: str, server: str | None = None) -> str:
    """Finish a waiting sign-in with the address the browser ended on, when the browser could not
    reach this kernel (a hub, a remote server, VS Code or Colab on another machine).

    ``address``: the whole URL from the browser's address bar after signing in (the page itself may
    not have loaded). ``server``: the connection's name, when sign-ins to several servers wait.
    Returns ``"signed in to NAME"``; raises SignInFailed when the address belongs to another sign-in
    (``state``), comes from another authorization server (``iss``) or the code is refused, and
    UsageError when nothing waits or the text is not such an address.
    """
    params = answer_params(address)
    awaited = waiting_sign_in(server)
    awaited.offer(params)
    return await awaited.outcome()
