"""How the commands' processes define dataclasses: ``compile_methods_once()``.

``@dataclass`` writes the source of each method it adds (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, a frozen class's ``__setattr__`` and
``__delattr__``) and compiles it with ``exec``: a ``usmp-compile`` process
defines about 400 dataclasses (xDSL's attributes and definitions, the
passes', the planner's) and compiles 1,900 such sources, 0.12 of its CPU
seconds at start-up. 700 of them are the text of an earlier one (every
field-less class has the same ``__eq__``, every frozen class the same
``__setattr__`` and ``__delattr__`` but for its fields' names).

``compile_methods_once()`` has ``dataclasses`` compile each distinct source
once per process and run that code object for the next class with the same
source: the same code (compiled with the flags ``dataclasses``' own ``exec``
uses: no ``__future__`` feature of the caller), executed in that class's
module globals, so every class gets functions of its own, as before. Only
for the console entry points (a process that does one job and ends), before
they import the compiler; calling it again changes nothing."""

from __future__ import annotations

import dataclasses
from functools import cache
from types import CodeType
from typing import Any


@cache
def _compiled(source: str) -> CodeType:
    # dont_inherit: not this module's ``from __future__ import annotations``
    # (the generated ``__init__`` keeps its annotations as objects)
    return compile(source, "<string>", "exec", dont_inherit=True)


def _exec_once_compiled(source: Any, scope: Any = None, names: Any = None) -> None:
    """``exec(source, scope, names)`` as ``dataclasses`` calls it, a source
    text compiled once."""
    code = _compiled(source) if isinstance(source, str) else source
    exec(code, scope, names)  # noqa: S102 -- dataclasses' own generated code


def compile_methods_once() -> bool:
    """From now on, ``@dataclass`` compiles each distinct method source once
    (module note); whether in place (False if this Python's ``dataclasses``
    does not build its methods with a module-level ``exec`` call)."""
    create = getattr(dataclasses, "_create_fn", None)
    if create is None or "exec" not in create.__code__.co_names:
        return False
    setattr(dataclasses, "exec", _exec_once_compiled)  # noqa: B010
    return True
