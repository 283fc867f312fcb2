"""The Python API, for notebooks and build scripts: ``usmp.compile``.

    import numpy as np
    import usmp

    lib = usmp.compile("kws_ref_model.tflite", algorithm="hill_climb",
                       pools=[usmp.Pool("sram", size=65536)])
    lib.plan.workspace_bytes, lib.plan.workspace_lower_bound     # 16000 16000
    lib.plan.pool("sram").buffers[0]             # name, offset, size, live
    print(lib.source("codegen/host/include/tvmgen_default.h"))
    (scores,) = lib.run([np.zeros((1, 49, 10, 1), np.int8)])

``compile`` runs exactly what ``usmp-compile`` runs (it builds the same
command line and calls ``usmp.tools.usmp_compile.compile_into``), into
``output_dir`` or a temporary folder that lives as long as the
:class:`Library`. A bad model, option or pool raises :class:`CompileError`
with the message ``usmp-compile`` prints. ``Library.run`` builds the output's
firmware-kit example with the library (gcc, ``-std=c99 -Werror``; builds are
cached by content) and runs it on the inputs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from usmp.tools.usmp_compile import CompileError

_KINDS = {
    "workspace": "workspace",
    "constant": "parameter",
    "parameter": "parameter",
    "persistent": "persistent",
}


@dataclass(frozen=True)
class Pool:
    """A memory pool to plan into (the USMP RFC's pool flags in Python).

    ``kind`` is ``workspace`` or ``constant`` (``parameter``); ``size`` the
    limit in bytes (0: none); ``alignment`` bytes (default: usmp's);
    ``targets`` the targets that use it (default ``("c",)``). Pools are tried
    in the order given."""

    name: str
    kind: str = "workspace"
    size: int = 0
    alignment: int | None = None
    targets: tuple[str, ...] = ()

    def flags(self) -> tuple[str, str]:
        """(``workspace`` | ``parameter``, its per-pool SPEC)."""
        kind = _KINDS.get(self.kind)
        if kind is None:
            raise CompileError(
                f"pool '{self.name}': kind '{self.kind}' is not one of "
                "workspace, constant, persistent"
            )
        spec = [f"size={self.size}"]
        if self.alignment is not None:
            spec.append(f"align={self.alignment}")
        if self.targets:
            spec.append(f"target={','.join(self.targets)}")
        return kind, ";".join(spec)


@dataclass(frozen=True)
class Placement:
    """Where one buffer lives: its pool, offset and size (bytes), and the
    steps of the model's main it is live in (half-open ``(start, end)``
    intervals; constants are live throughout)."""

    name: str
    pool: str
    offset: int
    size: int
    live: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class PoolPlan:
    name: str
    kind: str
    size: int
    """Bytes the plan uses."""
    lower_bound: int | None
    """The liveness lower bound of a workspace pool (None for constants)."""
    alignment: int
    provided_by: str
    """``library`` (defined in its C) or ``application``."""
    buffers: tuple[Placement, ...]


@dataclass(frozen=True)
class Plan:
    """usmp's memory plan (``memory/plan.json``)."""

    algorithm: str
    pools: tuple[PoolPlan, ...]

    def pool(self, name: str) -> PoolPlan:
        for p in self.pools:
            if p.name == name:
                return p
        names = ", ".join(p.name for p in self.pools)
        raise KeyError(f"no pool '{name}' (pools: {names})")

    @property
    def workspace_bytes(self) -> int:
        return sum(p.size for p in self.pools if p.kind == "workspace")

    @property
    def workspace_lower_bound(self) -> int:
        return sum(p.lower_bound or 0 for p in self.pools if p.kind == "workspace")

    @property
    def constant_bytes(self) -> int:
        return sum(p.size for p in self.pools if p.kind == "constant")

    @property
    def persistent_bytes(self) -> int:
        """State kept across runs (persistent pools)."""
        return sum(p.size for p in self.pools if p.kind == "persistent")

    def __str__(self) -> str:
        lines = [f"{'pool':<20} {'kind':<10} {'bytes':>10} {'lower bound':>12}"]
        for p in self.pools:
            bound = "" if p.lower_bound is None else f"{p.lower_bound:,}"
            lines.append(f"{p.name:<20} {p.kind:<10} {p.size:>10,} {bound:>12}")
        return "\n".join(lines)


class Library:
    """A compiled model: its output folder, plan, files and C interface."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.metadata: dict[str, Any] = json.loads(
            (directory / "metadata.json").read_text()
        )
        self.interface: dict[str, Any] = self.metadata["c_interface"]
        self.name: str = self.interface["model"]
        self.plan = _plan(self.metadata, self.interface)

    @property
    def files(self) -> dict[str, Path]:
        """Every file of the output: relative path -> path."""
        return {f: self.directory / f for f in self.metadata["files"]}

    def source(self, relative: str) -> str:
        """The text of one output file (``files``' keys)."""
        if relative not in self.metadata["files"]:
            raise KeyError(f"no file '{relative}' (files: {sorted(self.files)})")
        return (self.directory / relative).read_text()

    @property
    def header(self) -> str:
        """The interface header ``tvmgen_<model>.h``."""
        return self.source(f"codegen/host/include/{self.interface['header']}")

    def run(
        self,
        inputs: Sequence[Any] | Mapping[str, Any],
        *,
        runs: int = 1,
        compiler: str = "gcc",
        cflags: Sequence[str] | None = None,
    ) -> list[np.ndarray]:
        """Build the output's example application with the library (host
        ``compiler``, ``-std=c99`` and ``cflags``, default ``-O2 -Wall
        -Wextra -Werror -pedantic``) and run it ``runs`` times on ``inputs``
        (one array per model input, in order, or by input name); the model's
        outputs."""
        from usmp.testing.firmware import HOST_CFLAGS, run_example
        from usmp.testing.run_c import build

        arrays = self._inputs(inputs)
        flags = HOST_CFLAGS if cflags is None else tuple(cflags)
        exe = build(self._example_sources(), ["-std=c99", *flags], compiler)
        outputs, _ = run_example(exe, self.directory, arrays, runs=runs)
        return outputs

    def time(
        self,
        inputs: Sequence[Any] | Mapping[str, Any],
        *,
        runs: int = 100,
        compiler: str = "gcc",
        cflags: Sequence[str] = ("-O2",),
    ) -> float:
        """Mean CPU microseconds of one ``run`` over ``runs`` runs of the
        example built with ``cflags`` (as it prints them)."""
        from usmp.testing.firmware import run_example
        from usmp.testing.run_c import build

        exe = build(self._example_sources(), ["-std=c99", *cflags], compiler)
        _, printed = run_example(exe, self.directory, self._inputs(inputs), runs=runs)
        line = next(x for x in printed.splitlines() if x.startswith("time: "))
        return float(line.split()[1])

    def _example_sources(self) -> dict[str, str]:
        """The library's C files and the example's main, by file name."""
        sources = {  # by name; headers under include/ by their include path
            relative.removeprefix("codegen/host/include/").removeprefix(
                "codegen/host/src/"
            ): path.read_text()
            for relative, path in self.files.items()
            if relative.startswith("codegen/host/")
        }
        sources["example_main.c"] = self.source("example/main.c")
        return sources

    def _inputs(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        from usmp.testing.firmware import C_TYPES

        specs = self.interface["inputs"]
        if isinstance(inputs, Mapping):
            names = [t["name"] for t in specs]
            unknown = sorted(set(inputs) - set(names))
            if unknown:
                raise ValueError(
                    f"model '{self.name}' has no input {', '.join(unknown)} "
                    f"(inputs: {', '.join(names)})"
                )
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(f"input {', '.join(missing)} not given")
            inputs = [inputs[n] for n in names]
        if len(inputs) != len(specs):
            raise ValueError(
                f"model '{self.name}' takes {len(specs)} inputs, got {len(inputs)}"
            )
        arrays = []
        for t, x in zip(specs, inputs, strict=True):
            want = np.dtype(C_TYPES[t["c_type"]])
            x = np.asarray(x)
            if x.size != int(np.prod(t["shape"])):
                raise ValueError(
                    f"input '{t['name']}' must have shape {t['shape']} "
                    f"({int(np.prod(t['shape']))} values), got shape {list(x.shape)}"
                )
            if x.dtype != want:
                converted = x.astype(want)
                if not np.array_equal(converted, x):
                    raise ValueError(
                        f"input '{t['name']}' must be {want}; its {x.dtype} values "
                        f"do not all fit"
                    )
                x = converted
            arrays.append(x.reshape(t["shape"]))
        return arrays

    def __repr__(self) -> str:
        return (
            f"<usmp.Library {self.name!r} at {self.directory}: workspace "
            f"{self.plan.workspace_bytes:,} B (lower bound "
            f"{self.plan.workspace_lower_bound:,} B), constants "
            f"{self.plan.constant_bytes:,} B>"
        )


def _plan(metadata: dict[str, Any], interface: dict[str, Any]) -> Plan:
    memory = metadata.get("memory") or {}
    owners = {p["name"]: p["provided_by"] for p in interface["pools"]}
    buffers: dict[str, list[Placement]] = {}
    for b in memory.get("buffers", []):
        if b.get("pool") is None:
            continue
        buffers.setdefault(b["pool"], []).append(
            Placement(
                b["name"],
                b["pool"],
                b["offset"],
                b["size"],
                tuple((int(r[0]), int(r[1])) for r in b.get("live", [])),
            )
        )
    pools = tuple(
        PoolPlan(
            p["name"],
            p["kind"],
            p["size"],
            p.get("lower_bound") if p["kind"] != "constant" else None,
            p["alignment"],
            owners.get(p["name"], "library"),
            tuple(sorted(buffers.get(p["name"], []), key=lambda b: b.offset)),
        )
        for p in memory.get("pools", [])
    )
    return Plan(str(memory.get("algorithm", metadata.get("algorithm", ""))), pools)


def compile(  # noqa: A001 -- usmp.compile, as the issue names it
    model: str | Path | ModuleOp,
    *,
    pools: Sequence[Pool] = (),
    algorithm: str | None = None,
    module_name: str = "default",
    use_workspace_io: bool = False,
    library_pools: bool = False,
    plan_time_limit: float | None = None,
    output_dir: str | Path | None = None,
    patch: str = "off",
    patch_budget: float | None = None,
    operator_order: str | None = None,
    interface_api: str = "c",
    call_type: str | None = None,
    overlap: bool = True,
) -> Library:
    """Compile ``model`` (a ``.tflite`` file, a relay ``.mlir`` file, or a
    relay ``ModuleOp``, which is not modified) as ``usmp-compile`` does.

    ``pools`` as ``--usmp-workspace-pools``/``--usmp-parameter-pools`` and
    their per-pool flags (default: one workspace and one constant pool);
    pools named here are provided by the application in the C interface
    unless ``library_pools``. ``algorithm``: usmp's planner (default
    ``best_fit``). ``patch="auto"``: patch-based execution of the first
    stage (``--patch auto``; ``patch_budget`` as ``--patch-budget``).
    ``operator_order``: ``memory`` (default) or ``source``, as
    ``--operator-order``. ``overlap``: as ``--usmp-overlap on/off``. The
    output goes to ``output_dir`` (created; files an earlier run wrote there
    are replaced) or a temporary folder removed with
    the Library. ``interface_api`` and ``call_type``: TVM's calling
    conventions (``--interface-api``, ``--call-type``; README "Call types").
    Raises :class:`CompileError` for a bad input or option."""
    from usmp.tools.usmp_compile import (
        INPUT_ERRORS,
        compile_into,
        error_message,
        parse_arguments,
    )

    if output_dir is None:
        root = Path(tempfile.mkdtemp(prefix="usmp-"))
        out = root / module_name
    else:
        root, out = None, Path(output_dir)
    module = model.clone() if isinstance(model, ModuleOp) else None
    source = f"{module_name}.mlir" if module is not None else str(model)
    argv = [source, "-o", str(out), "--quiet", "--module-name", module_name]
    if algorithm is not None:
        argv += ["--algorithm", algorithm]
    if plan_time_limit is not None:
        argv += ["--plan-time-limit", str(plan_time_limit)]
    if use_workspace_io:
        argv.append("--use-workspace-io")
    if not overlap:
        argv += ["--usmp-overlap", "off"]
    if library_pools:
        argv.append("--library-pools")
    argv += ["--patch", patch]
    if patch_budget is not None:
        argv += ["--patch-budget", str(patch_budget)]
    if operator_order is not None:
        argv += ["--operator-order", operator_order]
    if interface_api != "c":
        argv += ["--interface-api", interface_api]
    if call_type is not None:
        argv += ["--call-type", call_type]
    try:
        argv += _pool_flags(pools)
        args, planned = parse_arguments(argv, exit_on_error=False)
        compile_into(args, planned, module)
    except argparse.ArgumentError as e:
        _remove(root)
        raise CompileError(f"usmp-compile: error: {e}") from None
    except INPUT_ERRORS as e:
        _remove(root)
        raise CompileError(error_message(e)) from None
    library = Library(out)
    if root is not None:  # the temporary folder goes with the Library
        weakref.finalize(library, _remove, root)
    return library


def _pool_flags(pools: Sequence[Pool]) -> list[str]:
    by_kind: dict[str, list[Pool]] = {
        "workspace": [],
        "parameter": [],
        "persistent": [],
    }
    flags: list[str] = []
    for pool in pools:
        kind, spec = pool.flags()
        by_kind[kind].append(pool)
        flags.append(f"--usmp-{kind}-pool-{pool.name}={spec}")
    for kind, listed in by_kind.items():
        if listed:
            flags.append(f"--usmp-{kind}-pools={','.join(p.name for p in listed)}")
    return flags


def _remove(root: Path | None) -> None:
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
