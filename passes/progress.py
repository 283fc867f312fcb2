"""Progress of a long pass, operator by operator, for whoever listens.

Passes whose work grows with the operators (``lower-ops``, and ``usmp``'s
kernel directions, overlap analysis and replay) call :func:`report` as they
reach each operator. A driver that shows progress (``usmp-compile``) installs
a listener for the duration of a step with :func:`listening`; without one,
:func:`report` does nothing. The listener is context-local
(``contextvars``): nothing is registered on import or held by a module, and
two compilations in two threads each see their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Listener = Callable[[str, int, int, str], None]
"""``(phase, done, total, operator)``: ``phase`` (e.g. ``replay``) is at
operator ``done`` of ``total`` (1-based), named ``operator``."""

_LISTENER: ContextVar[Listener | None] = ContextVar("usmp_progress", default=None)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """``listener`` hears every :func:`report` made inside the block."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def report(phase: str, done: int, total: int, operator: str) -> None:
    """``phase`` has reached operator ``done`` of ``total``, ``operator``."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(phase, done, total, operator)
