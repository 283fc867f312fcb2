"""Instructions per inference on an emulated Cortex-M (QEMU), for our
library and for a direct CMSIS-NN program of the same model.

QEMU with ``-icount shift=0`` advances its virtual clock by one nanosecond
per instruction executed; SysTick, clocked by the MPS2 boards' 25 MHz
processor clock, then decrements once every 40 instructions. A program reads
SysTick (and a count of its wraps, kept by its interrupt) before and after
what it measures: the difference times 40 is the number of instructions, to
within 40. QEMU counts *instructions, not cycles*: it models no pipeline,
no wait states, no caches and no DWT cycle counter, so a multiply-accumulate
(``smlad``) counts as one, like an ``add``. Every program first validates
the counter on a loop of known length (``subs``/``bne``: two instructions per
iteration) run for two lengths; their difference must give a ratio of small
whole numbers (40 on the MPS2 boards, 125/4 on the 32 MHz MPS3), which is
then used.

A program is a generic harness (``harness.c``, generated here: SysTick,
calibration, the measurement, the output bytes printed in hex through
semihosting) and a *model part* in a static archive, which provides
``bench_inputs``/``bench_run``/``bench_outputs``:

* ours (``library_program``): the ``usmp-compile`` output's C files, the
  entry function once as it is (``total``) and once with a SysTick reading
  after each operator call (``steps``, a second build); an output compiled
  with ``--profile`` instead links the kit's ``example/profile.c``, whose
  hooks print the per-layer table (``profile_table`` reads it, in
  instructions) after the outputs;
* CMSIS-NN (``usmp.testing.cmsis_nn_program``): the model as direct calls
  to CMSIS-NN's s8 functions, built from ``../shared/third_party``.

The model part's flash and RAM are read from the linker map (every section
the final image keeps from the model's archives: ``.text``/``.rodata`` are
flash, ``.data`` both, ``.bss`` RAM), so the harness, newlib and the input
arrays are counted for neither side.

Boards: ``m4`` (``mps2-an386``, ``-mcpu=cortex-m4 -mfloat-abi=hard
-mfpu=fpv4-sp-d16``, the measurement of ``../shared/third_party/README.md``),
``m7`` (``mps2-an500``) and ``m55`` (``mps3-an547``: MVE, so CMSIS-NN runs its
Helium kernels).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from usmp.testing.shared_models import MODELS_DIR
from usmp.tools.profile_table import ProfileTable, parse_profile, scaled

THIRD_PARTY = Path(
    os.environ.get("USMP_THIRD_PARTY_DIR", MODELS_DIR.parent / "third_party")
)
"""Arm's sources: ``CMSIS-NN``, ``CMSIS_6``, ``Cortex_DFP``."""

ARM_GCC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"
CALIBRATION = (100_000, 300_000)
"""Iterations of the two-instruction calibration loop, run twice."""


@dataclass(frozen=True)
class Board:
    """An emulated Cortex-M: QEMU machine, CPU, device files, flags."""

    name: str
    cpu: str
    machine: str
    device: str
    """``Cortex_DFP/Device/<device>`` (and its ``-D<device>`` define)."""
    cflags: tuple[str, ...]
    rom: tuple[int, int]
    ram: tuple[int, int]
    stack_limit: bool = False
    """Armv8-M: the device's startup sets the stack limit registers, but
    newlib's ``crt0`` (rdimon) moves the stack where the semihosting
    ``HEAPINFO`` says; the startup's limit is then 0 (no check)."""

    def flags(self) -> list[str]:
        return [f"-mcpu={self.cpu}", "-mthumb", *self.cflags]


BOARDS = {
    "m4": Board(
        "m4",
        "cortex-m4",
        "mps2-an386",
        "ARMCM4",
        ("-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"),
        (0x0, 0x400000),
        (0x20000000, 0x400000),
    ),
    "m7": Board(
        "m7",
        "cortex-m7",
        "mps2-an500",
        "ARMCM7",
        ("-mfloat-abi=hard", "-mfpu=fpv5-d16"),
        (0x0, 0x400000),
        (0x20000000, 0x400000),
    ),
    "m55": Board(
        "m55",
        "cortex-m55",
        "mps3-an547",
        "ARMCM55",
        ("-mfloat-abi=hard",),
        (0x0, 0x80000),  # ITCM
        (0x21000000, 0x200000),  # SSE-300 SRAM
        stack_limit=True,
    ),
}


class CortexMError(RuntimeError):
    """A build or an emulated run failed (the message has its output)."""


def missing_tools() -> str | None:
    """What is missing to build and run on QEMU (``None``: nothing)."""
    for tool, package in (
        (ARM_GCC, "gcc-arm-none-eabi libnewlib-arm-none-eabi"),
        (QEMU, "qemu-system-arm"),
    ):
        if shutil.which(tool) is None:
            return f"{tool} not found (apt-get install {package})"
    for part in ("CMSIS_6/CMSIS/Core/Include", "Cortex_DFP/Device"):
        if not (THIRD_PARTY / part).is_dir():
            return f"{THIRD_PARTY / part} not found (USMP_THIRD_PARTY_DIR)"
    return None


def _run(command: Sequence[str], cwd: Path, timeout: float | None = None) -> str:
    try:
        result = subprocess.run(
            list(command),
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        raise CortexMError(f"{' '.join(command)}: timed out after {timeout} s") from e
    if result.returncode != 0:
        raise CortexMError(
            f"{' '.join(command)} failed ({result.returncode}):\n"
            f"{result.stdout[-4000:]}{result.stderr[-4000:]}"
        )
    return result.stdout


# -- the model part -------------------------------------------------------------


@dataclass
class ModelPart:
    """C sources providing ``bench_inputs``/``bench_run``/``bench_outputs``
    (see ``HARNESS``), built into an archive with ``include_dirs``; with
    ``profiled`` (same names, other contents) a second build records a tick
    after each step (``usmp_profile_tick``)."""

    sources: dict[str, str]
    """File name -> C text."""
    include_dirs: list[Path] = field(default_factory=list[Path])
    defines: list[str] = field(default_factory=list[str])
    profiled: dict[str, str] = field(default_factory=dict[str, str])
    """Sources replaced in the profiled build."""
    libraries: list[tuple[str, list[Path]]] = field(
        default_factory=list[tuple[str, list[Path]]]
    )
    """Extra archives: (name, C sources), built with the same flags."""
    steps: list[str] = field(default_factory=list[str])
    """A label per profiled step, in order."""
    scratch: str = ""
    """Section of a static scratch array of which the program uses the size
    it prints (``scratch N``): the RAM counts ``N``, not the array."""


HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include "DEVICE.h"

/* provided by the model part */
void bench_inputs(void);
void bench_run(void);
void bench_outputs(void);

static volatile uint32_t wraps;
void SysTick_Handler(void) { ++wraps; }

/* SysTick ticks since it started: it counts down from 0xFFFFFF to 0, then
   reloads; the interrupt (at 1 -> 0) counts the periods. A reading is taken
   again while VAL is 0 or the interrupt of a finished period is pending, so
   the period count and VAL always agree. */
static uint64_t ticks(void) {
  uint32_t w, v;
  do {
    w = wraps;
    v = SysTick->VAL;
  } while (w != wraps || v == 0 || (SCB->ICSR & SCB_ICSR_PENDSTSET_Msk));
  return ((uint64_t)w << 24) + (0xFFFFFFu - v);
}

#define MAX_STEPS 256
static uint64_t step_ticks[MAX_STEPS];
static unsigned steps;
void usmp_profile_tick(void) {
  if (steps < MAX_STEPS) step_ticks[steps++] = ticks();
}

__attribute__((noinline)) static void spin(uint32_t n) {
  __asm volatile("1: subs %0, %0, #1\n bne 1b\n" : "+r"(n) : : "cc");
}

void bench_hex(const char* what, unsigned index, const void* data, unsigned n) {
  const unsigned char* p = (const unsigned char*)data;
  printf("%s %u ", what, index);
  for (unsigned i = 0; i < n; ++i) printf("%02x", p[i]);
  printf("\n");
}

int main(void) {
  SysTick->LOAD = 0xFFFFFFu;
  SysTick->VAL = 0;
  SysTick->CTRL = 7; /* processor clock, interrupt, enabled */
  const uint32_t lengths[2] = {CAL0, CAL1};
  for (int k = 0; k < 2; ++k) {
    uint64_t a = ticks();
    spin(lengths[k]);
    uint64_t b = ticks();
    printf("calibrate %lu %lu\n", (unsigned long)lengths[k], (unsigned long)(b - a));
  }
  bench_inputs();
  usmp_profile_tick();
  uint64_t t0 = ticks();
  bench_run();
  uint64_t t1 = ticks();
  printf("total %lu\n", (unsigned long)(t1 - t0));
  for (unsigned i = 1; i < steps; ++i)
    printf("step %u %lu\n", i - 1, (unsigned long)(step_ticks[i] - step_ticks[i - 1]));
  bench_outputs();
  printf("done\n");
  return 0;
}
"""


def _linker_script(board: Board) -> str:
    """The device's gcc linker script with the board's memories, 64 KB of
    stack and 256 KB of heap."""
    base = THIRD_PARTY / "Cortex_DFP/Device" / board.device / "Config"
    text = (base / f"{board.device}_gcc.ld").read_text()
    for name, value in (
        ("__ROM_BASE", board.rom[0]),
        ("__ROM_SIZE", board.rom[1]),
        ("__RAM_BASE", board.ram[0]),
        ("__RAM_SIZE", board.ram[1]),
        ("__STACK_SIZE", 0x10000),
        ("__HEAP_SIZE", 0x40000),
    ):
        text, n = re.subn(
            rf"{name}\s*=\s*0x[0-9A-Fa-f]+;", f"{name} = {value:#x};", text
        )
        if n != 1:
            raise CortexMError(f"{base}: no '{name} = ...;' to set")
    if board.stack_limit:
        text += "\n__usmp_no_stack_limit = 0;\n"
    return text


@dataclass(frozen=True)
class Footprint:
    """Bytes the final image keeps from the model's archives."""

    flash: int
    """``.text``, ``.rodata``, ``.data`` (its initial values)."""
    ram: int
    """``.data`` and ``.bss``."""


_MAP_LINE = re.compile(
    r"^\s*(\.\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+\.a)\((\S+)\)\s*$"
)


def _footprint(map_text: str, archives: Sequence[str], exclude: str = "") -> Footprint:
    """Sum the sections of ``archives``' members in a GNU ld map (the part
    after ``Linker script and memory map``, i.e. kept sections only), but
    the section ``exclude``."""
    kept = map_text.split("Linker script and memory map", 1)[-1]
    flash = ram = 0
    section = ""
    for line in kept.splitlines():
        head = re.match(r"^ (\.\S+)\s*$", line)  # a long name wraps the line
        if head:
            section = head.group(1)
            continue
        m = _MAP_LINE.match(line)
        if not m:
            section = ""
            continue
        name = m.group(1) or section
        section = ""
        size = int(m.group(3), 16)
        if Path(m.group(4)).name not in archives or size == 0 or name == exclude:
            continue
        if name.startswith((".text", ".rodata")):
            flash += size
        elif name.startswith(".data"):
            flash += size
            ram += size
        elif name.startswith((".bss", "COMMON")):
            ram += size
    return Footprint(flash, ram)


@dataclass(frozen=True)
class Measurement:
    """One program's run: instructions, per step, outputs, footprint."""

    instructions: int
    steps: list[int]
    outputs: list[bytes]
    footprint: Footprint
    instructions_per_tick: Fraction
    printed: str


def _calibrate(lines: list[str]) -> Fraction:
    """Instructions per SysTick tick from the two calibration loops: a ratio
    of small whole numbers (the virtual nanosecond per instruction over the
    board's clock: 40 at 25 MHz, 125/4 at 32 MHz)."""
    runs = [tuple(int(v) for v in line.split()[1:3]) for line in lines]
    if len(runs) != 2:
        raise CortexMError(f"expected two calibration lines, got {lines}")
    (n0, t0), (n1, t1) = runs
    if t1 <= t0:
        raise CortexMError(f"SysTick does not advance: {lines}")
    measured = Fraction(2 * (n1 - n0), t1 - t0)
    per_tick = measured.limit_denominator(8)
    # the two readings of each loop are exact to within a tick
    if per_tick < 1 or abs(measured - per_tick) * (t1 - t0) > 2 * per_tick:
        raise CortexMError(
            f"SysTick counts {float(measured):.4f} instructions per tick on a "
            f"loop of known length, not a ratio of small whole numbers "
            f"({lines}): is -icount shift=0 set?"
        )
    for n, t in runs:  # each loop alone: 2n instructions + a call, within a tick
        if abs(t * per_tick - 2 * n) > 2 * per_tick:
            raise CortexMError(
                f"the calibration loop of {2 * n} instructions took {t} ticks of "
                f"{per_tick}: the counter is not counting instructions"
            )
    return per_tick


class Builder:
    """Builds and runs programs for one board and optimisation level in a
    work directory."""

    def __init__(self, board: Board, opt: str, work: Path):
        self.board = board
        self.opt = opt
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        self._common: list[Path] | None = None
        self._archives: dict[tuple[object, ...], Path] = {}
        """Extra archives built (``ModelPart.libraries``), by sources and flags."""

    def cflags(self) -> list[str]:
        return [
            *self.board.flags(),
            self.opt,
            f"-D{self.board.device}",
            "-ffunction-sections",
            "-fdata-sections",
            "-I",
            str(THIRD_PARTY / "CMSIS_6/CMSIS/Core/Include"),
            "-I",
            str(THIRD_PARTY / "Cortex_DFP/Device" / self.board.device / "Include"),
            "-I",
            str(THIRD_PARTY / "Cortex_DFP/Device" / self.board.device / "Config"),
        ]

    def compile(self, source: Path, obj: Path, extra: Sequence[str] = ()) -> Path:
        _run(
            [ARM_GCC, *self.cflags(), *extra, "-c", str(source), "-o", str(obj)],
            self.work,
        )
        return obj

    def archive(
        self, name: str, sources: Sequence[Path], extra: Sequence[str] = ()
    ) -> Path:
        directory = self.work / name
        directory.mkdir(exist_ok=True)
        objects = []
        for k, source in enumerate(sources):
            obj = directory / f"{k:03d}_{source.stem}.o"
            objects.append(str(self.compile(source, obj, extra)))
        library = self.work / f"lib{name}.a"
        library.unlink(missing_ok=True)
        _run(["arm-none-eabi-ar", "rcs", str(library), *objects], self.work)
        return library

    def common(self) -> list[Path]:
        """The harness's objects: startup, system (built once)."""
        if self._common is None:
            device = THIRD_PARTY / "Cortex_DFP/Device" / self.board.device / "Source"
            extra = ["-D__STACK_LIMIT=__usmp_no_stack_limit"] * self.board.stack_limit
            self._common = [
                self.compile(
                    device / f"{s}_{self.board.device}.c", self.work / f"{s}.o", extra
                )
                for s in ("startup", "system")
            ]
            (self.work / "board.ld").write_text(_linker_script(self.board))
        return self._common

    def link(
        self, name: str, main: str, archives: Sequence[Path], extra: Sequence[str] = ()
    ) -> tuple[Path, str]:
        """An image of the harness ``main`` (compiled with ``extra`` flags)
        and ``archives``; its path and linker map."""
        common = self.common()
        source = self.work / f"{name}_main.c"
        source.write_text(main)
        obj = self.compile(source, self.work / f"{name}_main.o", extra)
        elf = self.work / f"{name}.elf"
        map_file = self.work / f"{name}.map"
        _run(
            [
                ARM_GCC,
                *self.board.flags(),
                "-T",
                str(self.work / "board.ld"),
                "-Wl,--gc-sections",
                f"-Wl,-Map={map_file}",
                "--specs=rdimon.specs",
                str(obj),
                *(str(c) for c in common),
                "-Wl,--start-group",
                *(str(a) for a in archives),
                "-lm",
                "-lrdimon",
                "-lc",
                "-Wl,--end-group",
                "-o",
                str(elf),
            ],
            self.work,
        )
        return elf, map_file.read_text()

    def execute(self, elf: Path, timeout: float = 300) -> str:
        return _run(
            [
                QEMU,
                "-M",
                self.board.machine,
                "-cpu",
                self.board.cpu,
                "-icount",
                "shift=0",
                "-nographic",
                "-monitor",
                "none",
                "-semihosting-config",
                "enable=on,target=native",
                "-kernel",
                str(elf),
            ],
            self.work,
            timeout,
        )

    def measure(self, name: str, part: ModelPart, profile: bool = True) -> Measurement:
        """Build ``part`` with the harness, run it (and its profiled build)."""
        main = (
            HARNESS.replace("DEVICE", self.board.device)
            .replace("CAL0", f"{CALIBRATION[0]}u")
            .replace("CAL1", f"{CALIBRATION[1]}u")
        )
        extra = [
            *(f"-I{d}" for d in part.include_dirs),
            *(f"-D{d}" for d in part.defines),
        ]
        libraries = []
        for lib, sources in part.libraries:  # each built once per builder
            key = (lib, tuple(sources), tuple(extra))
            if key not in self._archives:
                self._archives[key] = self.archive(f"{name}_{lib}", sources, extra)
            libraries.append(self._archives[key])
        model = self._model_archive(name, part.sources, extra)
        elf, map_text = self.link(name, main, [model, *libraries])
        printed = self.execute(elf)
        archives = [model.name, *(lib.name for lib in libraries)]
        footprint = _footprint(map_text, archives, part.scratch)
        if part.scratch:
            used = [
                int(x.split()[1])
                for x in printed.splitlines()
                if x.startswith("scratch ")
            ]
            if len(used) != 1:
                raise CortexMError(f"expected one 'scratch N' line: {printed[-2000:]}")
            footprint = Footprint(footprint.flash, footprint.ram + used[0])
        steps: list[int] = []
        if profile and part.profiled:
            sources = {**part.sources, **part.profiled}
            profiled = self._model_archive(f"{name}_profiled", sources, extra)
            elf, _ = self.link(f"{name}_profiled", main, [profiled, *libraries])
            steps = _parse(self.execute(elf), footprint).steps
        measured = _parse(printed, footprint)
        return Measurement(
            measured.instructions,
            steps,
            measured.outputs,
            footprint,
            measured.instructions_per_tick,
            printed,
        )

    def _model_archive(
        self, name: str, sources: dict[str, str], extra: Sequence[str]
    ) -> Path:
        directory = self.work / f"{name}_src"
        directory.mkdir(exist_ok=True)
        paths = []
        for file, text in sources.items():
            path = directory / file
            path.write_text(text)
            if file.endswith(".c"):
                paths.append(path)
        return self.archive(name, paths, [f"-I{directory}", *extra])


def _parse(printed: str, footprint: Footprint) -> Measurement:
    lines = printed.splitlines()
    if "done" not in lines:
        raise CortexMError(f"the program did not finish:\n{printed[-4000:]}")
    if "scratch too small" in lines:
        raise CortexMError("the program's scratch array is smaller than requested")
    per_tick = _calibrate([x for x in lines if x.startswith("calibrate ")])
    total = next(int(x.split()[1]) for x in lines if x.startswith("total "))
    steps = [
        round(int(x.split()[2]) * per_tick) for x in lines if x.startswith("step ")
    ]
    outputs = [
        bytes.fromhex(x.split()[2] if len(x.split()) > 2 else "")
        for x in lines
        if x.startswith("output ")
    ]
    return Measurement(
        round(total * per_tick), steps, outputs, footprint, per_tick, printed
    )


# -- our library as a model part ----------------------------------------------

_CALL = re.compile(r"^(\s+)(?:\w+ = )?(tvmgen_\w+)\(.*\);\s*$")


def _profiled_entry(text: str, entry: str) -> tuple[str, int]:
    """The AOT entry function's file with ``usmp_profile_tick();`` after each
    operator call of ``entry``; the number of calls."""
    out: list[str] = ["void usmp_profile_tick(void);"]
    inside = False
    calls = 0
    for line in text.splitlines():
        out.append(line)
        if line.startswith("void ") or line.startswith("int32_t "):
            inside = f" {entry}(" in line
            continue
        if inside and line.startswith("}"):
            inside = False
        m = _CALL.match(line) if inside else None
        if m:
            out.append(f"{m.group(1)}usmp_profile_tick();")
            calls += 1
    return "\n".join(out) + "\n", calls


def model_symbol(model: str, what: str) -> str:
    return f"tvmgen_{model}_{what}"


def profile_table(measured: Measurement) -> ProfileTable:
    """The per-layer table the kit's ``example/profile.c`` printed in a run
    of a ``--profile`` library, its SysTick ticks turned into instructions
    (QEMU models no DWT cycle counter, so the hooks use SysTick)."""
    table = parse_profile(measured.printed, "qemu output")
    if "SysTick" not in table.unit:
        raise CortexMError(f"expected SysTick ticks in the profile, got {table.unit}")
    return scaled(
        table,
        float(measured.instructions_per_tick),
        "instructions per run (QEMU -icount)",
    )


def _c_array(name: str, c_type: str, data: bytes) -> str:
    body = ",".join(str(b) for b in data)
    return f"static const unsigned char {name}[{max(len(data), 1)}] = {{{body}}};\n"


def library_program(out: Path, inputs: Sequence[np.ndarray]) -> ModelPart:
    """A ``usmp-compile`` output (default C interface, pools defined by the
    library, I/O inside the workspace or not) as a model part."""
    import json

    metadata = json.loads((out / "metadata.json").read_text())
    io = metadata["c_interface"]
    model = io["model"]
    if any(p["provided_by"] != "library" for p in io["pools"]):
        raise CortexMError("pools provided by the application are not supported")
    src = out / "codegen/host/src"
    sources = {p.name: p.read_text() for p in sorted(src.glob("*.c"))}
    sources[io["header"]] = (out / "codegen/host/include" / io["header"]).read_text()
    glue = [
        "#include <string.h>",
        f'#include "{io["header"]}"',
        "void bench_hex(const char*, unsigned, const void*, unsigned);",
    ]
    for k, x in enumerate(inputs):
        glue.append(_c_array(f"input_{k}", "", np.ascontiguousarray(x).tobytes()))
    in_type, out_type = io["inputs_type"], io["outputs_type"]
    if io.get("io_in_workspace"):
        glue.append("void bench_inputs(void) {")
        glue.append(f"  {in_type} in = {io['map_inputs']}();")
        for k, t in enumerate(io["inputs"]):
            glue.append(f"  memcpy(in.{t['c_name']}, input_{k}, {t['bytes']});")
        glue.append("}")
        glue.append(f"void bench_run(void) {{ {io['run']}(); }}")
        glue.append("void bench_outputs(void) {")
        glue.append(f"  {out_type} out = {io['map_outputs']}();")
    else:
        for k, t in enumerate(io["inputs"]):
            glue.append(f"static {t['c_type']} in_{k}[{t['bytes']}];")
        for k, t in enumerate(io["outputs"]):
            glue.append(f"static {t['c_type']} out_{k}[{t['bytes']}];")
        glue.append("void bench_inputs(void) {")
        for k, t in enumerate(io["inputs"]):
            glue.append(f"  memcpy(in_{k}, input_{k}, {t['bytes']});")
        glue.append("}")
        glue.append("void bench_run(void) {")
        fields = ", ".join(
            f".{t['c_name']} = in_{k}" for k, t in enumerate(io["inputs"])
        )
        glue.append(f"  {in_type} in = {{{fields}}};")
        fields = ", ".join(
            f".{t['c_name']} = out_{k}" for k, t in enumerate(io["outputs"])
        )
        glue.append(f"  {out_type} out = {{{fields}}};")
        glue.append(f"  {io['run']}(&in, &out);")
        glue.append("}")
        glue.append("void bench_outputs(void) {")
        glue.append(
            f"  {out_type} out = {{"
            + ", ".join(
                f".{t['c_name']} = out_{k}" for k, t in enumerate(io["outputs"])
            )
            + "};"
        )
    for k, t in enumerate(io["outputs"]):
        glue.append(f'  bench_hex("output", {k}, out.{t["c_name"]}, {t["bytes"]});')
    profile = out / "example/profile.c"
    if profile.exists():  # usmp-compile --profile: the kit's hooks print a table
        sources["profile.c"] = profile.read_text()
        glue.append(f"  {model_symbol(model, 'profile_report')}(1);")
    glue.append("}")
    if profile.exists():
        glue.insert(3, f"void {model_symbol(model, 'profile_report')}(long runs);")
    sources["bench_glue.c"] = "\n".join(glue) + "\n"
    if profile.exists():  # the hooks time the operators: no second build
        return ModelPart(sources)
    entry_file = f"tvmgen_{model}_aot_main.c"
    entry = f"tvmgen_{model}___tvm_main__"
    profiled, calls = _profiled_entry(sources[entry_file], entry)
    plan = json.loads((out / "memory/plan.json").read_text())
    labels = list(plan.get("step_operators", []))
    if len(labels) != calls:
        labels = [f"call {k}" for k in range(calls)]
    if f"tvmgen_{model}_cmsis_nn.c" in sources:  # --target cmsis-nn,c
        from usmp.testing.cmsis_nn_program import cmsis_nn_sources

        return ModelPart(
            sources,
            include_dirs=[THIRD_PARTY / "CMSIS-NN/Include"],
            profiled={entry_file: profiled},
            libraries=[("cmsis_nn", cmsis_nn_sources())],
            steps=labels,
        )
    return ModelPart(sources, profiled={entry_file: profiled}, steps=labels)
