"""What ``usmp-compile`` reports: ``metadata.json``, the C interface as
JSON, the patch decision's lines and the memory summary on stderr.

Plain functions of what a compile recorded (``usmp.tools.compile_driver``
passes its ``Compilation``'s pieces): nothing here changes the IR or
decides anything.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from usmp.tools.c_library import CLibrary
    from usmp.tools.compile_options import CompileOptions
    from usmp.tools.pool_flags import PoolFlag

SUMMARY_LINES = 60
"""At most this many lines of ``memory/summary.txt`` go to stderr."""


def memory_report(out: Path) -> dict[str, Any] | None:
    """``usmp``'s JSON report in output folder ``out``, if it wrote one."""
    path = out / "memory" / "plan.json"
    return json.loads(path.read_text()) if path.is_file() else None


def metadata(
    out: Path,
    o: CompileOptions,
    *,
    model: dict[str, Any],
    requested: Sequence[PoolFlag],
    patch: dict[str, Any] | None,
    interface: dict[str, Any] | None,
    files: Sequence[str],
) -> dict[str, Any]:
    """``metadata.json`` of output folder ``out``: the model, the options that
    shaped the output, the memory report and its summary, the patch decision
    (``patch_metadata``), the C interface and the files written."""
    memory = memory_report(out)
    summary: dict[str, Any] = {}
    if memory is not None:
        pools = memory.get("pools", [])
        workspace = [p for p in pools if p.get("kind") == "workspace"]
        constant = [p for p in pools if p.get("kind") == "constant"]
        summary = {
            "workspace_bytes": sum(p["size"] for p in workspace),
            "workspace_lower_bound_bytes": sum(
                p.get("lower_bound") or 0 for p in workspace
            ),
            "workspace_no_alias_bound_bytes": sum(
                p.get("no_alias_bound") or 0 for p in workspace
            ),
            "constant_bytes": sum(p["size"] for p in constant),
            "persistent_bytes": sum(
                p["size"] for p in pools if p.get("kind") == "persistent"
            ),
            "io_in_workspace": bool(o.use_workspace_io),
        }
    return {
        "version": 1,
        "model_name": o.module_name,
        "model": model,
        "executor": o.executor,
        "target": o.target,
        "algorithm": o.algorithm,
        "operator_order": o.operator_order,
        "pools_requested": [
            {
                "name": p.name,
                "kind": p.kind,
                "size": p.size,
                "alignment": p.alignment,
                "access": dict(p.access),
            }
            for p in requested
        ],
        "memory_summary": summary,
        "patch": patch,
        "memory": memory,
        "c_interface": interface,
        "files": sorted(set(files) | {"metadata.json"}),
    }


def c_interface(library: CLibrary) -> dict[str, Any]:
    """The library's C interface (``usmp.lowering.metadata.ModelInterface``)
    as JSON: what an application (or a test harness) needs to call it."""
    from usmp.lowering.metadata import io_macros

    m = library.interface
    tensors = io_macros(m)

    def tensor(t: Any, macro: str) -> dict[str, Any]:
        return {
            "name": t.name,
            "c_name": t.c_name,
            "c_type": t.c_element,
            "shape": list(t.type.get_shape()),
            "bytes": t.nbytes,
            "size_macro": macro,
        }

    interface: dict[str, Any] = {
        "model": m.model,
        "header": library.file("header"),
        "library": f"libtvmgen_{m.names.model}.a",
        "run": m.symbol("run"),
        "inputs_type": m.typedef("Inputs"),
        "outputs_type": m.typedef("Outputs"),
        "inputs": [tensor(t, n) for t, n in tensors[: len(m.inputs)]],
        "outputs": [tensor(t, n) for t, n in tensors[len(m.inputs) :]],
        "workspace_size_macro": f"TVMGEN_{m.upper}_WORKSPACE_SIZE",
        "io_in_workspace": m.io_in_workspace,
        "pools": [
            {
                "name": p.name,
                "c_name": p.c_name,
                "kind": p.kind,
                "size": p.size,
                "alignment": p.alignment,
                "provided_by": "application" if p.user else "library",
                "size_macro": m.define(p, "SIZE"),
                "tvm_size_macro": m.tvmgen_define(p),
            }
            for p in m.pools
        ],
    }
    if m.user_pools(workspace=True):
        interface["workspaces_type"] = m.typedef("Workspaces")
    if m.user_pools(workspace=False):
        interface["parameters_type"] = m.typedef("Parameters")
    if m.devices:  # TVM's device API: the application implements the hooks
        from usmp.lowering.metadata_devices import hook_names

        interface["devices_type"] = m.typedef("Devices")
        interface["devices"] = [
            {"name": d, "context": f"device_context_{d}", "hooks": hook_names(d)}
            for d in m.devices
        ]
    if m.states:
        interface["init"] = m.symbol("init")
    if m.io_in_workspace:
        interface["map_inputs"] = m.symbol("map_inputs")
        interface["map_outputs"] = m.symbol("map_outputs")
    return interface


# -- the patch decision -------------------------------------------------------------


def patch_lines(d: dict[str, Any]) -> list[str]:
    """``patch-stage``'s decision as the lines ``usmp-compile`` prints."""
    if not d.get("applied"):
        return [f"patch: not applied: {d.get('reason')}"]
    rows, cols = d["grid"]
    lines = [
        f"patch: first {d['depth']} of {d['layers']} layers in {rows}x{cols} "
        f"tiles; estimated peak {d['peak_before']:,} -> {d['peak_after']:,} B; "
        f"+{d['extra_macs']:,} MACs (+{100 * d['extra_macs'] / d['model_macs']:.1f}% "
        f"of {d['model_macs']:,}, budget {d['budget_macs']:,})"
        + (
            f"; estimated Cortex-M4 instructions of the stage "
            f"{d['instructions_before']:,} -> {d['instructions_after']:,}"
            if "instructions_after" in d
            else ""
        )
    ]
    if "planned_patched" in d:
        lines.append(
            f"patch: planned workspace {d['planned_unpatched']:,} -> "
            f"{d['planned_patched']:,} B"
        )
    return lines


def patch_metadata(decision: dict[str, Any], merged: int) -> dict[str, Any]:
    """The decision as ``metadata.json`` records it: with the number of
    functions ``dedupe-functions`` merged when the stage was patched."""
    if not decision.get("applied"):
        return decision
    planned = {k: v for k, v in decision.items() if k.startswith("planned_")}
    rest = {k: v for k, v in decision.items() if k not in planned}
    return {**rest, "merged_functions": merged, **planned}


# -- stderr ---------------------------------------------------------------------


def print_memory(out: Path, say: Callable[[str], None]) -> None:
    """One line per pool (``say``), then the memory summary of output folder
    ``out`` (``memory/summary.txt``, cut after ``SUMMARY_LINES`` lines: the
    file has every step)."""
    report = memory_report(out)
    if report is None:
        return
    for pool in report.get("pools", []):
        bound = pool.get("lower_bound")
        extra = f" (lower bound {bound:,} B)" if bound is not None else ""
        say(f"pool {pool['name']} [{pool['kind']}]: {pool['size']:,} B{extra}")
    path = out / "memory" / "summary.txt"
    if not path.is_file():
        return
    lines = path.read_text().splitlines()
    shown = lines if len(lines) <= SUMMARY_LINES else lines[: SUMMARY_LINES - 1]
    print("\n" + "\n".join(shown), file=sys.stderr)
    if len(shown) < len(lines):
        print(f"... {len(lines) - len(shown)} more lines in {path}", file=sys.stderr)
