"""Parameters of primitive functions that are constants at every call.

``fuse-ops`` passes a fused group's weights and biases as parameters (TVM's
lifted constants); ``main`` binds them to ``relay.constant`` values. Two
steps of ``lower-ops`` use that:

* ``constant_arguments`` (an analysis, IR unchanged): for each function, the
  parameters every ``relay.call`` of it binds to one and the same
  ``relay.constant``. A kernel may then rely on their values: re-lay its
  weights out at compile time (``ops_nn_dsp``) or bound its accumulators
  (``ranges``).
* ``drop_unused_constant_arguments`` (after the lowering): a parameter such a
  kernel no longer reads (its values now live in the kernel's own
  ``tir.allocate_const``) is removed from the function and from its calls,
  and the constant from ``main`` when nothing else uses it, so its bytes are
  not planned twice.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
)
from xdsl.ir import Operation

from usmp.dialects import relay, tir
from usmp.lowering.walk import walk_ops


def constant_arguments(module: ModuleOp) -> dict[str, dict[int, relay.ConstantOp]]:
    """Function name -> {parameter index: the ``relay.constant`` every call
    of the function passes there} (module note)."""
    seen: dict[str, list[relay.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, relay.CallOp):
            seen.setdefault(op.callee.string_value(), []).append(op)
    out: dict[str, dict[int, relay.ConstantOp]] = {}
    for name, calls in seen.items():
        bound: dict[int, relay.ConstantOp] = {}
        for i, arg in enumerate(calls[0].args):
            owner = arg.owner
            if isinstance(owner, relay.ConstantOp) and all(
                len(c.args) > i and c.args[i] is arg for c in calls
            ):
                bound[i] = owner
        if bound:
            out[name] = bound
    return out


def constant_array(value: object) -> npt.NDArray[np.generic] | None:
    """The values of a ``dense<...>`` integer constant as a numpy array
    (None for resources, floats or other element types)."""
    if not isinstance(value, DenseIntOrFPElementsAttr):
        return None
    t = value.type
    if not isinstance(t, TensorType):
        return None
    element = t.get_element_type()
    if not isinstance(element, IntegerType) or element.width.data not in (8, 16, 32):
        return None
    unsigned = element.signedness.data == Signedness.UNSIGNED
    dtype = np.dtype(f"<{'u' if unsigned else 'i'}{element.width.data // 8}")
    shape = tuple(t.get_shape())
    raw = np.frombuffer(value.data.data, dtype=dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if raw.size == 1 and count != 1:
        return np.full(shape, raw[0], dtype=dtype)
    if raw.size != count:
        return None
    return raw.reshape(shape)


_NUMPY_FORMATS = frozenset(f"<{code}" for code in "bBhHiIqQefd")
"""Element formats (xDSL's ``struct`` format of the element type) numpy
reads with the same values: integers and IEEE f16/f32/f64."""


def stored_elements(value: DenseIntOrFPElementsAttr) -> npt.NDArray[np.generic] | None:
    """The elements ``value`` stores (one for a splat written as one value),
    flat, as a numpy view of its bytes: what ``get_values()`` returns,
    without building a Python number per element. None for element types
    numpy does not read the same way (bf16, complex)."""
    fmt = getattr(value.get_element_type(), "format", None)
    if fmt not in _NUMPY_FORMATS:
        return None
    return np.frombuffer(value.data.data, dtype=np.dtype(fmt))


def is_uniform(value: object) -> bool:
    """Whether ``value`` is a ``dense<...>`` attribute of equal elements (a
    scalar or a splat: an immediate once lowered). Elements compare as
    Python numbers do (a NaN equals nothing, -0.0 equals 0.0)."""
    if not isinstance(value, DenseIntOrFPElementsAttr):
        return False
    elements = stored_elements(value)
    if elements is None:
        values = value.get_values()
        return all(e == values[0] for e in values)
    return elements.size == 0 or bool((elements == elements[0]).all())


def drop_unused_constant_arguments(
    module: ModuleOp, bound: Mapping[str, Mapping[int, relay.ConstantOp]]
) -> None:
    """Remove each parameter of ``bound`` (``constant_arguments``) that its
    lowered function (a tir prim func) never uses, from the function and its
    calls; erase constants left unused (module note)."""
    functions = {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.body.blocks
    }
    # A lowered function holds no call (its loop nests are most of the
    # module's ops): the walk skips them, those lowered now and every other
    # prim func (``tir.prim_func``: loops on memrefs, lowered earlier).
    lowered = [
        f
        for name, f in functions.items()
        if name in bound and relay.PRIMITIVE not in f.attributes
    ]
    calls: dict[str, list[relay.CallOp]] = {}
    for top in module.ops:
        if tir.PRIM_FUNC in top.attributes or any(top is f for f in lowered):
            continue
        for op in walk_ops(top):
            if isinstance(op, relay.CallOp):
                calls.setdefault(op.callee.string_value(), []).append(op)
    for name, params in sorted(bound.items()):
        f = functions.get(name)
        if f is None or relay.PRIMITIVE in f.attributes:
            continue
        block = f.body.block
        unused = sorted(
            i for i in params if i < len(block.args) and not block.args[i].uses
        )
        if not unused:
            continue
        for i in reversed(unused):
            block.erase_arg(block.args[i])
        inputs = [t for i, t in enumerate(f.function_type.inputs) if i not in unused]
        outputs = list(f.function_type.outputs.data)
        f.function_type = FunctionType.from_lists(inputs, outputs)
        if f.arg_attrs is not None:  # pyright: ignore[reportUnnecessaryComparison]
            kept = [a for i, a in enumerate(f.arg_attrs.data) if i not in unused]
            f.arg_attrs = type(f.arg_attrs)(kept)  # pyright: ignore
        for call in calls.get(name, []):
            _drop_operands(call, unused)


def _drop_operands(call: relay.CallOp, unused: list[int]) -> None:
    dropped = [call.args[i] for i in unused]
    keep = [a for i, a in enumerate(call.args) if i not in unused]
    new = relay.CallOp(call.callee, keep, call.result.type)
    new.attributes.update(call.attributes)
    new.location = call.location
    new.result.name_hint = call.result.name_hint
    block = call.parent_block()
    assert block is not None
    block.insert_op_before(new, call)
    call.result.replace_all_uses_with(new.result)
    call.detach()
    call.erase()
    for value in dropped:
        owner = value.owner
        if isinstance(owner, Operation) and not value.uses:
            owner.detach()
            owner.erase()
