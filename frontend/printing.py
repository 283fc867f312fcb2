"""Printing an imported module with its weights in one of three forms, and
listing the weights as numpy arrays.

* ``hex`` (default, what the pipeline reads back): weights inline;
  xDSL prints ``dense<...>`` of more than 100 elements as one hex string,
  which parses at memory speed.
* ``resource``: MLIR's out-of-line form: constants over ``threshold``
  elements print as ``dense_resource<key>`` and their bytes go to the file's
  ``{-# dialect_resources: {builtin: {key: "0x..."}} #-}`` section (4-byte
  little-endian alignment header + data, as MLIR writes it). Readable, and
  accepted by ``mlir-opt``; xDSL parses it too, but keeps the blobs in a
  process-wide table, so a process should parse one such file.
* ``elided``: constants over ``threshold`` elements print as
  ``dense_resource<__elided__>`` (MLIR's ``--mlir-elide-elementsattrs-if-larger``):
  for reading only.

The module passed in is never modified (printing works on a clone).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import IO, Any

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    TensorType,
)

from usmp.dialects.relay import ConstantOp
from usmp.frontend.builder import dense_values, numpy_dtype
from usmp.printing import ExactPrinter

WEIGHT_FORMATS = ("hex", "resource", "elided")
ELIDED_KEY = "__elided__"


def constants(module: ModuleOp) -> Iterator[tuple[str, TensorType, npt.NDArray[Any]]]:
    """Every ``relay.constant`` with a ``dense`` value, in IR order:
    ``(name, type, values)``; the name is the SSA name hint or ``cst<N>``."""
    for n, op in enumerate(o for o in module.walk() if isinstance(o, ConstantOp)):
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr):
            continue
        t = value.type
        assert isinstance(t, TensorType)
        yield op.result.name_hint or f"cst{n}", t, dense_values(value)


def print_module(
    module: ModuleOp,
    stream: IO[str],
    weights: str = "hex",
    threshold: int = 16,
    generic: bool = False,
) -> None:
    """Print ``module`` with its weights in the form ``weights`` (see the
    module docstring); ``threshold``: constants with more elements than this
    go out of line (``resource``/``elided``); ``generic``: MLIR's generic op
    form (what ``mlir-opt --allow-unregistered-dialect`` reads)."""
    if weights not in WEIGHT_FORMATS:
        raise ValueError(
            f"unknown weight format '{weights}' (expected {', '.join(WEIGHT_FORMATS)})"
        )
    blobs: dict[str, str] = {}
    if weights != "hex":
        module = module.clone()
        keys: set[str] = set()
        for op in module.walk():
            if not isinstance(op, ConstantOp):
                continue
            value = op.value
            if not isinstance(value, DenseIntOrFPElementsAttr):
                continue
            t = value.type
            assert isinstance(t, TensorType)
            if math.prod(t.get_shape()) <= threshold:
                continue
            if weights == "elided":
                key = ELIDED_KEY
            else:
                key = _unique_key(op.result.name_hint or "cst", keys)
                blobs[key] = _blob(value)
            op.properties["value"] = DenseResourceAttr.from_params(key, t)
    printer = ExactPrinter(stream=stream, print_generic_format=generic)
    printer.print_op(module)
    stream.write("\n")
    if blobs:
        stream.write("\n{-#\n  dialect_resources: {\n    builtin: {\n")
        stream.write(",\n".join(f'      {k}: "{v}"' for k, v in blobs.items()))
        stream.write("\n    }\n  }\n#-}\n")


def _unique_key(base: str, used: set[str]) -> str:
    key, n = base, 0
    while key in used:
        n += 1
        key = f"{base}_{n}"
    used.add(key)
    return key


def _blob(value: DenseIntOrFPElementsAttr) -> str:
    """MLIR's textual blob: ``0x`` + little-endian u32 alignment + data."""
    data = value.data.data
    t = value.type
    assert isinstance(t, TensorType)
    element_bytes = numpy_dtype(t.element_type).itemsize
    header = int(element_bytes).to_bytes(4, "little")
    return "0x" + (header + data).hex().upper()


def format_constants(module: ModuleOp, full: bool = False) -> str:
    """The weights of ``module`` as numpy arrays, one block per constant."""
    parts: list[str] = []
    options: dict[str, Any] = {"threshold": np.inf} if full else {}
    with np.printoptions(**options):
        for name, t, values in constants(module):
            parts.append(f"%{name} : {t}\n{np.array2string(values, separator=', ')}")
    return "\n\n".join(parts) + ("\n" if parts else "")
