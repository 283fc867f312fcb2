"""usmp-opt's dialects: ``relay`` (graph level), ``tir`` (operator level),
``device`` (the virtual device both use) and the ``emitc`` ops xDSL does not
ship. Registered as lazy factories: importing this package loads no dialect."""

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """The project's dialects plus the upstream ones its IR uses."""

    def get_relay() -> Dialect:
        from usmp.dialects.relay import Relay

        return Relay

    def get_device() -> Dialect:
        from usmp.dialects.device import DEVICE

        return DEVICE

    def get_tir() -> Dialect:
        from usmp.dialects.tir import TIR

        return TIR

    def get_emitc() -> Dialect:
        from usmp.dialects.emitc import EmitC

        return EmitC

    def get_builtin() -> Dialect:
        from xdsl.dialects.builtin import Builtin

        return Builtin

    def get_func() -> Dialect:
        from xdsl.dialects.func import Func

        return Func

    def get_arith() -> Dialect:
        from xdsl.dialects.arith import Arith

        return Arith

    def get_memref() -> Dialect:
        from xdsl.dialects.memref import MemRef

        return MemRef

    def get_scf() -> Dialect:
        from xdsl.dialects.scf import Scf

        return Scf

    def get_math() -> Dialect:
        from xdsl.dialects.math import Math

        return Math

    return {
        "builtin": get_builtin,
        "func": get_func,
        "arith": get_arith,
        "memref": get_memref,
        "scf": get_scf,
        "math": get_math,
        "device": get_device,
        "relay": get_relay,
        "tir": get_tir,
        "emitc": get_emitc,
    }


def new_context(*, allow_unregistered: bool = False) -> Context:
    """A fresh ``Context`` knowing every dialect of ``get_all_dialects()``
    (registered as factories: a dialect loads when first used)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
