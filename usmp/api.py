"""The Python API, for notebooks and build scripts: ``usmp.compile``.

    import numpy as np
    import usmp

    lib = usmp.compile("kws_ref_model.tflite", algorithm="hill_climb",
                       pools=[usmp.Pool("sram", size=65536)])
    lib.plan.workspace_bytes, lib.plan.workspace_lower_bound     # 16000 16000
    lib.plan.pool("sram").buffers[0]             # name, offset, size, live
    print(lib.source("codegen/host/include/tvmgen_default.h"))
    (scores,) = lib.run([np.zeros((1, 49, 10, 1), np.int8)])

``compile(model, options, **fields)`` takes a :class:`CompileOptions` (the
typed options ``usmp-compile`` translates its flags into; keyword arguments
are its fields, ``options`` or not) and runs what ``usmp-compile`` runs
(``usmp.tools.compile_driver.compile_model``: the pass pipeline built from
the options), into ``output_dir`` or a temporary folder that lives as long
as the :class:`Library`. A bad model, option or pool raises
:class:`CompileError` with the message ``usmp-compile`` prints.
``Library.run`` builds the output's firmware-kit example with the library
(gcc, ``-std=c99 -Werror``; builds are cached by content,
``usmp.tools.host_run``) and runs it on the inputs.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from usmp.tools.compile_options import CompileError, CompileOptions, CustomOp, Pool

if TYPE_CHECKING:
    from usmp.tools.profile_table import ProfileTable

__all__ = [
    "CompileError",
    "CompileOptions",
    "CustomOp",
    "Library",
    "Placement",
    "Plan",
    "Pool",
    "PoolPlan",
    "compile",
]


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


def _quantize(
    x: np.ndarray, scale: float, zero_point: int, dtype: np.dtype
) -> np.ndarray:
    """``x`` quantised as TFLite's QUANTIZE does: ``round(x / scale) +
    zero_point`` in float32, half away from zero, saturated to ``dtype``."""
    scaled = np.asarray(x, np.float32) / np.float32(scale)
    whole = np.trunc(scaled)
    halfway = np.abs(scaled - whole) == 0.5  # std::round: away from zero
    rounded = np.where(halfway, whole + np.sign(scaled), np.rint(scaled))
    info = np.iinfo(dtype)
    q = np.clip(rounded.astype(np.int64) + zero_point, info.min, info.max)
    return np.ascontiguousarray(q.astype(dtype))


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
        quantize: bool = False,
    ) -> list[np.ndarray]:
        """Build the output's example application with the library (host
        ``compiler``, ``-std=c99`` and ``cflags``, default ``-O2 -Wall
        -Wextra -Werror -pedantic``) and run it ``runs`` times on ``inputs``
        (one array per model input, in order, or by input name); the model's
        outputs. Each input must have the input's type and shape and be
        C-contiguous, as TFLite Micro's ``set_input`` requires (``ValueError``
        otherwise); ``quantize=True`` takes float values for a quantised
        input and quantises them with its scale and zero point as TFLite's
        QUANTIZE does (round half away from zero, saturated)."""
        from usmp.tools.host_run import HOST_CFLAGS

        flags = HOST_CFLAGS if cflags is None else tuple(cflags)
        return self._execute(inputs, runs, compiler, flags, quantize)[0]

    def _execute(
        self,
        inputs: Sequence[Any] | Mapping[str, Any],
        runs: int,
        compiler: str,
        cflags: Sequence[str],
        quantize: bool,
    ) -> tuple[list[np.ndarray], str]:
        """Build the example with the library (and the libraries its
        operators call) and run it ``runs`` times: the outputs, and what it
        printed."""
        from usmp.tools.host_run import build, run_example

        arrays = self._inputs(inputs, quantize)
        sources = self._example_sources()
        include, libraries = _libraries(sources, compiler)
        exe = build(sources, ["-std=c99", *cflags, *include], compiler, libraries)
        return run_example(exe, self.directory, arrays, runs=runs)

    def time(
        self,
        inputs: Sequence[Any] | Mapping[str, Any],
        *,
        runs: int = 100,
        compiler: str = "gcc",
        cflags: Sequence[str] = ("-O2",),
        quantize: bool = False,
    ) -> float:
        """Mean CPU microseconds of one ``run`` over ``runs`` runs of the
        example built with ``cflags`` (as it prints them); ``inputs`` and
        ``quantize`` as for ``run``."""
        _, printed = self._execute(inputs, runs, compiler, cflags, quantize)
        line = next(x for x in printed.splitlines() if x.startswith("time: "))
        return float(line.split()[1])

    def profile(
        self,
        inputs: Sequence[Any] | Mapping[str, Any],
        *,
        runs: int = 100,
        compiler: str = "gcc",
        cflags: Sequence[str] = ("-O2",),
        quantize: bool = False,
    ) -> ProfileTable:
        """The per-layer table of a library compiled with
        ``CompileOptions(profile=True)``: the example built with ``cflags``
        run ``runs`` times, its ``example/profile.c`` table read back
        (``usmp.tools.profile_table``: rows of function, TFLite operator and
        index, microseconds per run)."""
        from usmp.tools.profile_table import parse_profile

        if "example/profile.c" not in self.files:
            raise CompileError(
                "Library.profile needs a library compiled with "
                "CompileOptions(profile=True) (usmp-compile --profile)"
            )
        _, printed = self._execute(inputs, runs, compiler, cflags, quantize)
        return parse_profile(printed, "the example's output")

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
        if "example/profile.c" in self.files:  # CompileOptions(profile=True)
            sources["example_profile.c"] = self.source("example/profile.c")
        return sources

    def _inputs(
        self, inputs: Sequence[Any] | Mapping[str, Any], quantize: bool = False
    ) -> list[np.ndarray]:
        from usmp.tools.host_run import C_TYPES

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
        model_inputs = self.metadata.get("model", {}).get("inputs", [])
        quantization = {t["name"]: t for t in model_inputs if "scale" in t}
        arrays = []
        for t, x in zip(specs, inputs, strict=True):
            want = np.dtype(C_TYPES[t["c_type"]])
            what = f"input '{t['name']}' of model '{self.name}'"
            if not isinstance(x, np.ndarray):
                raise ValueError(
                    f"{what} must be a numpy array of {want} with shape "
                    f"{t['shape']}, got {type(x).__name__}"
                )
            if quantize and x.dtype.kind == "f" and want.kind in "iu":
                q = quantization.get(t["name"])
                if q is None:
                    raise ValueError(
                        f"{what} has no scale and zero point to quantize with"
                    )
                x = _quantize(x, q["scale"], q["zero_point"], want)
            if x.dtype != want:
                hint = (
                    "; float values can be quantized with run(..., quantize=True)"
                    if x.dtype.kind == "f" and want.kind in "iu" and not quantize
                    else ""
                )
                raise ValueError(
                    f"{what} must be {want}, got {x.dtype} (convert it with "
                    f"x.astype(np.{want}) if its values fit{hint})"
                )
            if list(x.shape) != list(t["shape"]):
                raise ValueError(
                    f"{what} must have shape {t['shape']}, got {list(x.shape)}"
                )
            if not x.flags.c_contiguous:
                raise ValueError(
                    f"{what} must be C-contiguous (np.ascontiguousarray(x))"
                )
            arrays.append(x)
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
    options: CompileOptions | None = None,
    *,
    output_dir: str | Path | None = None,
    **fields: Any,
) -> Library:
    """Compile ``model`` (a ``.tflite`` file, a relay ``.mlir`` file, or a
    relay ``ModuleOp``, which is not modified) as ``usmp-compile`` does.

    ``options`` (default ``CompileOptions()``) says how; each keyword
    argument is a field of :class:`CompileOptions` and replaces it, e.g.
    ``pools=[usmp.Pool("sram", size=65536)]``, ``algorithm="hill_climb"``,
    ``module_name``, ``use_workspace_io``, ``library_pools``,
    ``plan_time_limit``, ``patch="auto"``, ``patch_budget``,
    ``operator_order``, ``overlap``, ``interface_api``, ``call_type``,
    ``target``/``offload`` (``None``: the field's default). Pools named here
    are provided by the application in the C interface unless
    ``library_pools``. The output goes to ``output_dir`` (created; files an
    earlier run wrote there are replaced) or a temporary folder removed with
    the Library. Raises :class:`CompileError` for a bad input or option."""
    from usmp.tools.compile_driver import INPUT_ERRORS, compile_model, error_message
    from usmp.tools.compile_options import DriverOptions

    given = {k: v for k, v in fields.items() if v is not None}
    unknown = sorted(set(given) - {f.name for f in dataclasses.fields(CompileOptions)})
    if unknown:
        raise TypeError(
            f"usmp.compile() got unexpected keyword argument(s) {', '.join(unknown)}"
            " (not fields of usmp.CompileOptions)"
        )
    try:
        options = dataclasses.replace(options or CompileOptions(), **given)
    except CompileError as e:
        raise CompileError(error_message(e)) from None
    if output_dir is None:
        root = Path(tempfile.mkdtemp(prefix="usmp-"))
        out = root / options.module_name
    else:
        root, out = None, Path(output_dir)
    source = model.clone() if isinstance(model, ModuleOp) else model
    try:
        compile_model(source, options, DriverOptions(output=str(out), quiet=True))
    except INPUT_ERRORS as e:
        _remove(root)
        raise CompileError(error_message(e)) from None
    library = Library(out)
    if root is not None:  # the temporary folder goes with the Library
        weakref.finalize(library, _remove, root)
    return library


def _remove(root: Path | None) -> None:
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)


def _libraries(sources: dict[str, str], compiler: str) -> tuple[list[str], list[str]]:
    """Include flags and archives for a library that calls CMSIS-NN
    (``--target cmsis-nn,c``): CMSIS-NN from ``$CMSIS_PATH`` (its folder),
    built for the host; none otherwise."""
    import os

    from usmp.tools.host_run import cmsis_nn_archive

    if not any("arm_nnfunctions.h" in text for text in sources.values()):
        return [], []
    path = os.environ.get("CMSIS_PATH", "")
    if not path or not (Path(path) / "Include/arm_nnfunctions.h").exists():
        raise ValueError(
            "this library calls CMSIS-NN (--target cmsis-nn,c): set CMSIS_PATH to "
            "CMSIS-NN's folder (with Include/arm_nnfunctions.h and Source/) to "
            f"build it on the host (CMSIS_PATH={path!r})"
        )
    root = Path(path)
    return ["-I", str(root / "Include")], [str(cmsis_nn_archive(root, compiler))]
