"""tvmc's ``--target``, ``--executor``, ``--runtime`` and ``--pass-config``
values, read as TVM 0.19 reads them and checked against what usmp does.

Plain Python: every problem is a :class:`TvmcError` whose message names the
flag, what is wrong and what is accepted.

``--target``: ``"c -mcpu=cortex-m4"``, or a comma-separated list whose last
entry is the TVM target ``c`` and whose earlier entries are external codegens
(``"cmsis-nn, c"``, ``"ethos-u,cmsis-nn,c"``, ``"accel,c"``). usmp-opt
generates C for every operator: a codegen entry is accepted (so
``--workspace-pools-targets`` may name it) with a warning that nothing is
offloaded. ``c`` takes TVM's options ``mcpu``, ``march``,
``workspace-byte-alignment``, ``constants-byte-alignment`` and the options
every TVM target has (``keys``, ``tag``, ``device``, ``model``, ``libs``);
the two alignments set usmp's pool alignments, the rest is recorded. Option
values with a comma or space are quoted: ``-mattr="+a,+b"``.
``--target-c-mcpu=...`` and ``--target-<codegen>-<option>=...`` add options
as in tvmc.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

TVM_TARGET = "c"
C_OPTIONS = (
    "mcpu",
    "march",
    "workspace-byte-alignment",
    "constants-byte-alignment",
    "keys",
    "tag",
    "device",
    "model",
    "libs",
)
INTEGER_C_OPTIONS = ("workspace-byte-alignment", "constants-byte-alignment")
# TVM target kinds usmp-opt does not generate code for (the last --target entry)
OTHER_TVM_TARGETS = (
    "llvm",
    "cuda",
    "rocm",
    "opencl",
    "metal",
    "vulkan",
    "hexagon",
    "webgpu",
    "nvptx",
    "ext_dev",
)
_CODEGEN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


class TvmcError(Exception):
    """A tvmc option usmp-tvmc cannot honour: one message, exit 1."""


@dataclass
class Target:
    """One ``--target`` entry: its kind (``c`` or a codegen) and options."""

    kind: str
    options: dict[str, str] = field(default_factory=dict[str, str])

    def __str__(self) -> str:
        opts = "".join(f" -{k}={_quote(v)}" for k, v in sorted(self.options.items()))
        return self.kind + opts


def _quote(value: str) -> str:
    return f'"{value}"' if re.search(r"[\s,]", value) else value


def parse_targets(text: str | None) -> list[Target]:
    """``--target``'s entries, the TVM target ``c`` last."""
    if text is None or not text.strip():
        raise TvmcError(
            '--target is required, as in tvmc (e.g. --target c, --target "c '
            '-mcpu=cortex-m4" or --target "cmsis-nn, c")'
        )
    if text.lstrip().startswith("{") or text.endswith(".json"):
        raise TvmcError(
            f"--target {text}: a JSON target is not supported; give it as a "
            'string, e.g. --target "c -mcpu=cortex-m4"'
        )
    targets: list[Target] = []
    for segment in _split_commas(text):
        try:
            tokens = shlex.split(segment)
        except ValueError as e:
            raise TvmcError(f"--target {text}: {e}") from None
        if not tokens:
            raise TvmcError(f"--target {text}: an empty entry between commas")
        kind, *opts = tokens
        if not _CODEGEN_NAME.fullmatch(kind):
            raise TvmcError(f"--target {text}: '{kind}' is not a target name")
        target = Target(kind)
        for opt in opts:
            name, eq, value = opt.lstrip("-").partition("=")
            if not opt.startswith("-") or not name:
                raise TvmcError(
                    f"--target {text}: '{opt}' is not an option -NAME=VALUE"
                )
            set_target_option(target, name, value if eq else "1", f"--target {text}")
        targets.append(target)
    kinds = [t.kind for t in targets]
    if len(set(kinds)) != len(kinds):
        raise TvmcError(
            f"--target {text}: duplicate target definitions are not allowed"
        )
    for t in targets:
        if t.kind in OTHER_TVM_TARGETS:
            raise TvmcError(
                f"--target {text}: usmp-tvmc generates C only; the TVM target "
                f"'{t.kind}' is not supported (accepted: c, after any external "
                'codegens, e.g. "cmsis-nn, c")'
            )
    if kinds[-1] != TVM_TARGET:
        raise TvmcError(
            f"--target {text}: the last target must be the TVM target 'c' "
            '(accepted: c, after any external codegens, e.g. "cmsis-nn, c")'
        )
    return targets


def _split_commas(text: str) -> list[str]:
    """``text`` split at the commas outside quotes."""
    parts, current, quote = [], "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            parts.append(current)
            current = ""
            continue
        current += ch
    return [*parts, current]


def set_target_option(target: Target, name: str, value: str, flag: str) -> None:
    """Set ``-name=value`` on ``target`` (``c``'s options are checked)."""
    if target.kind == TVM_TARGET:
        if name not in C_OPTIONS:
            raise TvmcError(
                f"{flag}: '{name}' is not an option of the c target; accepted: "
                f"{', '.join(C_OPTIONS)}"
            )
        if name in INTEGER_C_OPTIONS and not _digits(value):
            raise TvmcError(f"{flag}: {name}='{value}' is not a number of bytes")
    target.options[name] = value


def apply_target_flags(targets: list[Target], flags: list[tuple[str, str]]) -> None:
    """``--target-<kind>-<option>=VALUE`` flags (tvmc's per-target options)
    onto the targets; the kind is matched longest first (``cmsis-nn-mcpu``)."""
    kinds = sorted((t.kind for t in targets), key=len, reverse=True)
    for rest, value in flags:
        flag = f"--target-{rest}"
        kind = next((k for k in kinds if rest.startswith(f"{k}-")), None)
        if kind is None:
            raise TvmcError(
                f"{flag}: names no target of --target "
                f"({', '.join(t.kind for t in targets)}); tvmc spells these "
                "--target-<target>-<option>, e.g. --target-c-mcpu=cortex-m4"
            )
        target = next(t for t in targets if t.kind == kind)
        option = rest[len(kind) + 1 :]
        set_target_option(target, option, value, f"{flag}={value}")


# -- executor and runtime ------------------------------------------------------

EXECUTOR_OPTIONS = {
    "aot": (
        "link-params",
        "unpacked-api",
        "interface-api",
        "workspace-byte-alignment",
        "constant-byte-alignment",
    ),
    "graph": ("link-params",),
}
RUNTIME_OPTIONS = {"crt": ("system-lib",), "cpp": ("system-lib",)}
BOOL_OPTIONS = ("link-params", "unpacked-api", "system-lib")


def _digits(text: str) -> bool:
    """ASCII decimal digits only (``str.isdigit`` also takes ``²``, which
    ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def parse_bool(text: str, flag: str) -> bool:
    """tvmc's boolean spellings: an integer (0 = false) or true/false."""
    if _digits(text.strip()):
        return int(text) != 0
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise TvmcError(f"{flag}: '{text}' is not a boolean; accepted: 0, 1, true, false")


@dataclass(frozen=True)
class Executor:
    """``--executor aot`` and its ``--executor-aot-*`` options."""

    workspace_alignment: int | None = None
    constant_alignment: int | None = None
    interface_api_given: bool = False
    interface_api: str = "c"
    unpacked_api: bool | None = None
    """``--executor-aot-unpacked-api`` if given."""


def check_executor(name: str | None, options: dict[str, str]) -> Executor:
    """The AOT executor's options, or the error for what usmp does not make."""
    if name is not None and name not in EXECUTOR_OPTIONS:
        raise TvmcError(f'--executor {name}: executor "{name}" is not defined in TVM')
    if name == "graph":
        raise TvmcError(
            "--executor graph: usmp-tvmc compiles for TVM's AOT executor only "
            "(accepted: aot)"
        )
    _check_registry_options("executor", name or "aot", options)
    given = {k: v for k, v in options.items() if k.startswith("aot-")}
    flags = {k: f"--executor-{k}={v}" for k, v in given.items()}
    api = given.get("aot-interface-api")
    if api is not None and api not in ("c", "packed"):
        raise TvmcError(
            f"{flags['aot-interface-api']}: interface '{api}' is not one of "
            "TVM's; accepted: c, packed"
        )
    text = given.get("aot-unpacked-api")
    unpacked = None if text is None else parse_bool(text, flags["aot-unpacked-api"])
    if unpacked is False and api in (None, "c"):
        raise TvmcError(
            f"{flags['aot-unpacked-api']}: the C interface needs unpacked-api = 1 "
            '(as in TVM: "either interface-api == packed or unpacked-api == '
            "true\"); add --executor-aot-interface-api=packed for TVM's packed "
            "operator calls"
        )
    link = given.get("aot-link-params")
    if link is not None and not parse_bool(link, flags["aot-link-params"]):
        raise TvmcError(
            f"{flags['aot-link-params']}: usmp-tvmc links the parameters into the "
            "C library (its constant pools); accepted: 1"
        )
    alignments: list[int | None] = []
    for key in ("aot-workspace-byte-alignment", "aot-constant-byte-alignment"):
        text = given.get(key)
        if text is not None and not _digits(text):
            raise TvmcError(f"{flags[key]}: '{text}' is not a number of bytes")
        alignments.append(None if text is None else int(text))
    return Executor(alignments[0], alignments[1], api is not None, api or "c", unpacked)


def check_runtime(name: str | None, options: dict[str, str]) -> None:
    if name is not None and name not in RUNTIME_OPTIONS:
        raise TvmcError(f'--runtime {name}: runtime "{name}" is not defined in TVM')
    if name == "cpp":
        raise TvmcError(
            "--runtime cpp: the generated C library needs no TVM runtime; it is "
            "meant for TVM's C runtime setting (accepted: crt)"
        )
    _check_registry_options("runtime", name or "crt", options)
    lib = options.get("crt-system-lib")
    if lib is not None and parse_bool(lib, f"--runtime-crt-system-lib={lib}"):
        raise TvmcError(
            f"--runtime-crt-system-lib={lib}: usmp-tvmc registers no functions "
            "in a TVM system library (the C interface calls them directly); "
            "accepted: 0"
        )


def _check_registry_options(kind: str, name: str, options: dict[str, str]) -> None:
    """tvmc's ``--executor-<name>-<option>``: the option must exist and
    belong to the chosen ``--executor`` (likewise ``--runtime``)."""
    registry = EXECUTOR_OPTIONS if kind == "executor" else RUNTIME_OPTIONS
    for key, value in options.items():
        owner = next((n for n in registry if key.startswith(f"{n}-")), None)
        option = key[len(owner) + 1 :] if owner else ""
        if owner is None or option not in registry[owner]:
            accepted = [
                f"--{kind}-{n}-{o}" for n, opts in registry.items() for o in opts
            ]
            raise TvmcError(
                f"--{kind}-{key}={value}: not a tvmc {kind} option; accepted: "
                f"{', '.join(accepted)}"
            )
        if owner != name:
            raise TvmcError(
                f"--{kind}-{key}={value}: passed but --{kind} is {name}, not {owner}"
            )


# -- pass configs --------------------------------------------------------------

# TVM PassContext options that change nothing in usmp-opt's pipeline (it does
# not vectorise, has no storage rewrite or tuning, and never emits asserts)
NO_EFFECT_CONFIGS = (
    "tir.disable_vectorize",
    "tir.disable_storage_rewrite",
    "tir.noalias",
    "tir.disable_assert",
    "relay.backend.use_auto_scheduler",
    "relay.backend.use_meta_schedule",
)
USMP_CONFIGS = ("tir.usmp.enable", "tir.usmp.algorithm", "tir.usmp.use_workspace_io")


@dataclass(frozen=True)
class PassConfig:
    algorithm: str | None = None
    use_workspace_io: bool = False
    usmp_disabled: bool = False
    values: tuple[tuple[str, str], ...] = ()


def parse_pass_configs(entries: list[str] | None, algorithms: list[str]) -> PassConfig:
    """``--pass-config NAME=VALUE`` entries (repeatable, last wins)."""
    values: dict[str, str] = {}
    accepted = ", ".join((*USMP_CONFIGS, *NO_EFFECT_CONFIGS))
    for entry in entries or []:
        name, eq, value = entry.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or "=" in value:
            raise TvmcError(
                f"--pass-config {entry}: invalid format, use <config>=<value> "
                "(e.g. --pass-config tir.usmp.algorithm=hill_climb)"
            )
        if name == "tir.usmp.custom_algorithm":
            raise TvmcError(
                f"--pass-config {entry}: a Python planning function cannot be "
                "plugged into usmp-opt; use tir.usmp.algorithm="
                f"{'|'.join(algorithms)}"
            )
        if name not in (*USMP_CONFIGS, *NO_EFFECT_CONFIGS):
            raise TvmcError(
                f"--pass-config {entry}: configuration '{name}' is not supported "
                f"by usmp-tvmc; accepted: {accepted}"
            )
        if name != "tir.usmp.algorithm":
            parse_bool(value, f"--pass-config {entry}")
        elif value not in algorithms:
            raise TvmcError(
                f"--pass-config {entry}: unknown USMP algorithm '{value}'; "
                f"accepted: {', '.join(algorithms)}"
            )
        values[name] = value

    def flag(name: str) -> bool:
        return name in values and parse_bool(values[name], name)

    return PassConfig(
        algorithm=values.get("tir.usmp.algorithm"),
        use_workspace_io=flag("tir.usmp.use_workspace_io"),
        usmp_disabled="tir.usmp.enable" in values and not flag("tir.usmp.enable"),
        values=tuple(sorted(values.items())),
    )
