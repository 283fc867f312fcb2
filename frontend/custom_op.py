"""``--custom-op NAME=path/to/kernel.h[:function]``: the ``CustomOp`` a user
names and its checks before any model is read (``usmp.frontend.tflite_custom``
imports it into the relay module). Plain Python: ``usmp.tools.compile_options``
reads the flag without loading the importer, xDSL or NumPy."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SYNTAX = "NAME=path/to/kernel.h[:function]"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


class CustomOpError(ValueError):
    """A ``--custom-op`` that cannot be used as given."""


@dataclass(frozen=True)
class CustomOp:
    """The C kernel of the TFLite custom code ``name``: ``function`` (default:
    ``name``), declared in the header ``header``."""

    name: str
    header: str
    function: str = ""

    @property
    def c_function(self) -> str:
        return self.function or self.name

    @property
    def spelling(self) -> str:
        fn = f":{self.function}" if self.function else ""
        return f"{self.name}={self.header}{fn}"


def parse_custom_op(text: str) -> CustomOp:
    """``NAME=path/to/kernel.h[:function]``; a ``CustomOpError`` otherwise."""
    name, eq, rest = text.partition("=")
    if not eq or not name or not rest:
        raise CustomOpError(f"--custom-op '{text}' is not {SYNTAX}")
    header, function = rest, ""
    head, colon, tail = rest.rpartition(":")
    if colon and _IDENTIFIER.fullmatch(tail) and head:
        header, function = head, tail
    return CustomOp(name, header, function)


def check_custom_op(op: CustomOp) -> None:
    """The function is a C identifier, the header a readable file that
    declares it."""
    where = f"--custom-op {op.spelling}"
    if not _IDENTIFIER.fullmatch(op.c_function):
        raise CustomOpError(
            f"{where}: '{op.c_function}' is not a C identifier; name the function "
            f"after the header: {SYNTAX}"
        )
    path = Path(op.header)
    if not path.suffix == ".h":
        raise CustomOpError(f"{where}: '{op.header}' is not a header (.h); {SYNTAX}")
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise CustomOpError(
            f"{where}: cannot read the header '{op.header}': {e.strerror or e}"
        ) from None
    code = _COMMENTS.sub(" ", text)
    if not re.search(rf"\b{re.escape(op.c_function)}\s*\(", code):
        raise CustomOpError(
            f"{where}: '{op.header}' does not declare the function "
            f"'{op.c_function}'; expected a declaration such as: int32_t "
            f"{op.c_function}(const tvmgen_custom_tensor_t* inputs, int32_t n_inputs, "
            "tvmgen_custom_tensor_t* outputs, int32_t n_outputs, const uint8_t* "
            "options, int32_t options_len);"
        )
