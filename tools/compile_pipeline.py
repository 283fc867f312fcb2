"""The pass pipeline of a compile, built from its ``CompileOptions``.

``compile_passes(options, report=...)`` is the list of pass instances
``usmp-compile`` runs on the imported relay module, in order::

    place-operators{offload}            with --offload
    plan-devices{targets}
    fold-explicit-padding               unless --fold-padding off
    patch-stage{budget depth stripes io evaluate}
                                        with --patch auto; evaluate holds the
                                        passes below up to the planning, with
                                        usmp-plan-memory for usmp
    fuse-ops{module_name}
    dedupe-functions{patched_only}      with --patch auto
    lower-ops{mcpu}                     mcpu: the host target's -mcpu
    aot-lower-main{module_name order order_io call_type interface_api}
    usmp{algorithm time_limit use_workspace_io pools report overlap}
    convert-to-emitc{user_pools profile}

and ``pipeline_text(passes)`` is the same as one ``-p`` string
(``usmp-compile --dump-pipeline``): ``usmp-import-tflite --print-debuginfo
MODEL | usmp-opt -p "<it>" -t c-library`` writes what ``usmp-compile``
writes from the IR, byte for byte. ``parse_pipeline_text`` reads such a
string back into pass instances (xDSL's ``PassPipeline.parse_spec``): the
same passes, equal field by field.

xDSL's own ``ArgSpec`` printer writes a string option between quotes as it
is, and a float as ``str`` does; neither a ``"`` in a path nor a float
in exponent form (``1e-05``, which its lexer reads as an identifier) would
read back. ``pipeline_text`` escapes the one and writes the other with a
decimal point (``1.0e-05``); an infinite float is ``inf``, which the
project's passes read as their fields' type (``usmp.passes.options``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from xdsl.passes import ModulePass, PassPipeline

from usmp.tools.compile_options import CompileOptions
from usmp.tools.pool_flags import PoolFlag, pools_option, resolve_pools


def _make(name: str, **options: Any) -> ModulePass:
    from usmp.passes import get_all_passes

    return get_all_passes()[name]()(**options)


def requested_pools(options: CompileOptions) -> list[PoolFlag]:
    """The pools the options name, resolved (``usmp.tools.pool_flags``)."""
    return resolve_pools(
        options.pools,
        options.workspace_byte_alignment,
        options.constant_byte_alignment,
    )


def user_pools(options: CompileOptions) -> tuple[str, ...]:
    """The pools the application provides: those the options name, unless
    ``library_pools``."""
    if options.library_pools:
        return ()
    return tuple(p.name for p in requested_pools(options))


def _planning(options: CompileOptions) -> dict[str, Any]:
    """The options ``usmp`` and ``usmp-plan-memory`` share."""
    return {
        "algorithm": options.algorithm,
        "use_workspace_io": options.use_workspace_io,
        "pools": pools_option(requested_pools(options)),
        "time_limit": options.plan_time_limit or 0,
        "overlap": options.plan_overlap,
    }


def compile_passes(options: CompileOptions, *, report: str = "") -> list[ModulePass]:
    """The pipeline of a compile (module note); ``report``: where ``usmp``
    writes the memory report (none if empty)."""
    passes: list[ModulePass] = []
    if options.offload:
        from usmp.passes.place_operators import offload_option

        passes.append(
            _make("place-operators", offload=offload_option(options.offload_map))
        )
    passes.append(_make("plan-devices", targets=tuple(options.targets)))
    if options.fold_padding:
        passes.append(_make("fold-explicit-padding"))
    patch = options.patch != "off"
    lowering = [
        _make("fuse-ops", module_name=options.module_name),
        *([_make("dedupe-functions", patched_only=True)] if patch else []),
        *(
            [_make("partition-cmsis-nn", mcpu=options.cmsis_nn_mcpu)]
            if options.cmsis_nn_mcpu is not None
            else []
        ),
        _make("lower-ops", mcpu=options.mcpu),
        _make(
            "aot-lower-main",
            module_name=options.module_name,
            order=options.operator_order,
            order_io=options.use_workspace_io,
            call_type=options.resolved_call_type,
            interface_api=options.interface_api,
        ),
    ]
    planning = _planning(options)
    if patch:
        evaluate = [*lowering, _make("usmp-plan-memory", **planning)]
        passes.append(
            _make(
                "patch-stage",
                budget=float(options.patch_budget),
                depth=options.patch_depth,
                **_grid(options),
                io=options.use_workspace_io,
                evaluate=pipeline_text(evaluate),
            )
        )
    passes += lowering
    passes.append(_make("usmp", **planning, report=report))
    passes.append(
        _make(
            "convert-to-emitc",
            user_pools=user_pools(options),
            profile=options.profile,
        )
    )
    return passes


# -- as text ---------------------------------------------------------------------


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)  # inf, -inf, nan: read by usmp.passes.options
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        return mantissa + e + exponent
    return str(value)


def pass_text(p: ModulePass) -> str:
    """``p`` as it is written in a pipeline (options that differ from their
    default only)."""
    spec = p.spec()
    if not spec.parameters:
        return spec.name
    options = " ".join(
        f"{name}={','.join(_value(v) for v in values)}" if values else name
        for name, values in spec.parameters.items()
    )
    return f"{spec.name}{{{options}}}"


def pipeline_text(passes: Sequence[ModulePass]) -> str:
    """``passes`` as one ``-p`` string (module note)."""
    return ",".join(pass_text(p) for p in passes)


def parse_pipeline_text(text: str) -> tuple[ModulePass, ...]:
    """The passes of a ``-p`` string (``pipeline_text``'s inverse)."""
    from usmp.passes import get_all_passes

    return PassPipeline.parse_spec(get_all_passes(), text).passes


def _grid(options: CompileOptions) -> dict[str, int]:
    """``patch-stage``'s ``stripes`` and ``cols`` from ``--patch-stripes``
    and ``--patch-grid``."""
    from usmp.passes.patch_stage import parse_grid

    if options.patch_grid:
        rows, cols = parse_grid(options.patch_grid)
        return {"stripes": rows, "cols": cols}
    return {"stripes": options.patch_stripes}
