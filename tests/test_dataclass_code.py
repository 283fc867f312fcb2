"""``compile_methods_once`` (``tools/dataclass_code.py``): dataclasses
defined after it behave, print, compare, hash, refuse assignment and
describe themselves exactly as without it; a source compiled for one class
is reused (code shared, functions and globals their own). In processes of
their own: the deferral is process-wide."""

from __future__ import annotations

import subprocess
import sys

_CLASSES = """
import dataclasses
from dataclasses import KW_ONLY, InitVar, dataclass, field
from typing import ClassVar

LIMIT = 3


@dataclass(frozen=True)
class Empty:
    pass


@dataclass(frozen=True)
class AlsoEmpty:
    pass


@dataclass(frozen=True, order=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, order=True)
class Other:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@dataclass
class Mutable:
    name: str
    items: list[int] = field(default_factory=list)
    hidden: int = field(default=7, repr=False, compare=False)
    seed: InitVar[int] = 1
    limit: ClassVar[int] = LIMIT
    _: KW_ONLY
    flag: bool = False

    def __post_init__(self, seed: int) -> None:
        self.items.append(seed * LIMIT)


@dataclass(eq=False, slots=True)
class Slotted:
    a: float
    b: str = "b"


@dataclass(unsafe_hash=True)
class Hashed:
    k: int


def describe() -> list[str]:
    import inspect

    out = []
    for cls in (Empty, AlsoEmpty, Point, Other, Mutable, Slotted, Hashed):
        for name in sorted(vars(cls)):
            f = vars(cls)[name]
            if callable(f) and name.startswith("__") and hasattr(f, "__code__"):
                out.append(f"{cls.__name__}.{name} {f.__qualname__} "
                           f"{inspect.signature(f)} {f.__annotations__!r} "
                           f"{f.__code__.co_filename} {f.__module__}")
        out.append(f"{cls.__name__} {getattr(cls, '__match_args__', None)}")
    p, q = Point(1, 2, ("a",)), Point(1, 3)
    out += [repr(p), str(p == Point(1, 2, ("a",))), str(p < q), str(hash(p) == hash(Point(1, 2, ("a",))))]
    out += [repr(Empty()), str(Empty() == Empty()), str(Empty() == AlsoEmpty()), str(hash(Empty()))]
    for obj, attr in ((p, "x"), (Empty(), "z")):
        try:
            setattr(obj, attr, 5)
        except dataclasses.FrozenInstanceError as e:
            out.append(f"setattr: {e}")
        try:
            delattr(obj, attr)
        except dataclasses.FrozenInstanceError as e:
            out.append(f"delattr: {e}")
    m = Mutable("m", seed=2, flag=True)
    out += [repr(m), str(m == Mutable("m", [6], hidden=1, seed=2, flag=True)), str(Mutable.__hash__)]
    out += [repr(Slotted(1.5)), str(Slotted.__slots__), str(hash(Hashed(4)) == hash(Hashed(4)))]
    try:
        Point()
    except TypeError as e:
        out.append(f"Point(): {e}")
    return out
"""

_PROBE = (
    "import sys, types\n"
    "if sys.argv[1] == '1':\n"
    "    from usmp.tools.dataclass_code import compile_methods_once\n"
    "    assert compile_methods_once() and compile_methods_once()\n"
    "module = types.ModuleType('probe')\n"
    "sys.modules['probe'] = module\n"
    "exec(compile(sys.argv[2], 'probe.py', 'exec'), module.__dict__)\n"
    "print('\\n'.join(module.describe()))\n"
    "shared = module.Empty.__eq__.__code__ is module.AlsoEmpty.__eq__.__code__\n"
    "own = module.Empty.__eq__ is not module.AlsoEmpty.__eq__\n"
    "print('shared' if shared else 'compiled twice', own)\n"
)


def _describe(memo: bool) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, "1" if memo else "0", _CLASSES],
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.splitlines()


def test_dataclasses_are_the_same_with_methods_compiled_once() -> None:
    once, each = _describe(True), _describe(False)
    assert once[-1] == "shared True"
    assert each[-1] == "compiled twice True"
    assert once[:-1] == each[:-1]
    text = "\n".join(once)
    # the generated __init__'s annotations are objects (this module's
    # ``from __future__ import annotations`` is not the generated code's)
    assert "'x': <class 'int'>" in text
    assert "cannot assign to field 'x'" in text and "<string>" in text
