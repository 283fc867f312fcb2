"""Two targets: ``--target accel,c`` and ``--offload OP_TYPE[,...]=TARGET``.

``usmp-compile --target accel,c`` names the targets the model may run on,
TVM's way (``tvmc --target "ethos-u,c"``): the last one is the host target
``c``, which runs everything not offloaded and the AOT entry. ``--offload
CONV_2D,DEPTHWISE_CONV_2D=accel`` (repeatable) places every operator of
those TFLite types on ``accel``: the pass ``place-operators{offload=
"CONV_2D=accel,DEPTHWISE_CONV_2D=accel"}`` (``usmp.passes.place_operators``)
at the start of the compile's pipeline. A relay ``.mlir`` input may carry
``on_device``/``device_copy`` annotations itself. ``plan-devices{targets}``
then makes every device explicit and refuses a target ``--target`` does not
name, ``fuse-ops`` never fuses across devices and names offloaded groups
``tvmgen_<m>_<target>_fused_...``, ``aot-lower-main`` calls the device
hooks, ``usmp`` places each buffer in a pool its users' targets may access,
and the C library puts the offloaded operators in ``tvmgen_<m>_<target>.c``.

Here: the two flags' values, checked (plain Python; every problem is an
:class:`OffloadError` naming the flag).
"""

from __future__ import annotations

from collections.abc import Sequence

from usmp.passes.place_operators import HOST_TARGET
from usmp.passes.place_operators import OP_TYPE as _OPCODE
from usmp.passes.place_operators import TARGET_NAME as _TARGET_NAME

__all__ = ["HOST_TARGET", "OffloadError", "parse_offload", "parse_targets"]


class OffloadError(ValueError):
    """A bad ``--target`` or ``--offload`` value (the message says why)."""


TARGET_OPTIONS = ("mcpu", "march")
"""Options a ``--target`` entry may carry (TVM's ``c`` target options the
lowering reads: ``-mcpu=cortex-m4`` selects its kernels, ``lower-ops``'s
``mcpu``)."""


def parse_target_entries(text: str) -> list[tuple[str, dict[str, str]]]:
    """``--target``: comma-separated entries ``NAME [-OPTION=VALUE ...]`` (TVM's
    spelling, e.g. ``"c -mcpu=cortex-m4"``), the host ``c`` last; each entry's
    name and options."""
    entries: list[tuple[str, dict[str, str]]] = []
    for entry in text.split(","):
        name, *options = entry.split() or [""]
        if not _TARGET_NAME.fullmatch(name):
            raise OffloadError(
                f"--target {text!r}: '{name}' is not a target name (expected letters, "
                "digits, '_' and '-', e.g. --target accel,c)"
            )
        values: dict[str, str] = {}
        for option in options:
            key, eq, value = option.removeprefix("-").partition("=")
            if not option.startswith("-") or not eq or key not in TARGET_OPTIONS:
                raise OffloadError(
                    f"--target {text!r}: '{option}' is not an option of '{name}' "
                    f"(accepted: {', '.join(f'-{o}=VALUE' for o in TARGET_OPTIONS)}, "
                    'e.g. --target "c -mcpu=cortex-m4")'
                )
            values[key] = value
        entries.append((name, values))
    targets = [name for name, _ in entries]
    if targets[-1] != HOST_TARGET:
        raise OffloadError(
            f"--target {text!r}: the last target must be the host target "
            f"'{HOST_TARGET}' (it runs the AOT entry and every operator not "
            "offloaded), e.g. --target accel,c"
        )
    if len(set(targets)) != len(targets):
        raise OffloadError(f"--target {text!r}: a target is named twice")
    return entries


def parse_targets(text: str) -> list[str]:
    """``--target``'s target names, the host ``c`` last (options dropped)."""
    return [name for name, _ in parse_target_entries(text)]


def host_mcpu(text: str) -> str:
    """The host target's ``-mcpu`` (``""`` when not given)."""
    return parse_target_entries(text)[-1][1].get("mcpu", "")


def parse_offload(specs: Sequence[str], targets: Sequence[str]) -> dict[str, str]:
    """``--offload OP_TYPE[,OP_TYPE...]=TARGET`` (repeatable) as a map from
    TFLite builtin operator type to target."""
    if not specs:  # no tflite package to import (~0.03 CPU s, numpy's 0.05)
        return {}
    from usmp.frontend.tflite_schema import schema_class

    known = {n for n in vars(schema_class("BuiltinOperator")) if not n.startswith("_")}
    placed: dict[str, str] = {}
    for spec in specs:
        types, sep, target = spec.partition("=")
        if not sep or not types or not target:
            raise OffloadError(
                f"--offload {spec!r}: expected OP_TYPE[,OP_TYPE...]=TARGET, e.g. "
                "--offload CONV_2D,DEPTHWISE_CONV_2D=accel"
            )
        if target not in targets or target == HOST_TARGET:
            others = ", ".join(t for t in targets if t != HOST_TARGET)
            others = others or "none: add one, e.g. --target accel,c"
            raise OffloadError(
                f"--offload {spec!r}: target '{target}' is not one of the offload "
                f"targets of --target ({others})"
            )
        if target == "cmsis-nn":
            raise OffloadError(
                f"--offload {spec!r}: the cmsis-nn target chooses its operators "
                "itself (every int8 conv2d, depthwise, fully connected, pooling and "
                "softmax it can compute); give --target cmsis-nn,c without --offload"
            )
        for op_type in (t.strip() for t in types.split(",")):
            if not _OPCODE.fullmatch(op_type) or op_type not in known:
                raise OffloadError(
                    f"--offload {spec!r}: '{op_type}' is not a TFLite builtin "
                    "operator type (e.g. CONV_2D, DEPTHWISE_CONV_2D, "
                    "FULLY_CONNECTED; see docs/tflite-builtins.md)"
                )
            if placed.get(op_type, target) != target:
                raise OffloadError(
                    f"--offload: {op_type} is placed on both '{placed[op_type]}' "
                    f"and '{target}'"
                )
            placed[op_type] = target
    return placed
