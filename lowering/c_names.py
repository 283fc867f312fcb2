"""Every identifier the generated C uses, chosen in one place.

Names reach C from many sources: IR symbols (operator functions, globals),
model input/output names (struct fields, entry parameters), pool names
(struct fields, static arrays, ``TVM_<MODEL>_<POOL>_..._BUFFER_SIZE``
macros), the model name (``tvmgen_<model>_run``, ``TVMInputs_<model>``, ...)
and SSA names (parameters and locals). All of them go through this module:

* :func:`c_identifier` makes one name a valid identifier that is no C99,
  C11, C23 or C++ keyword, no name the generated code uses from the standard
  headers (``int8_t``, ``expf``, ``NULL``, ...), no macro of ours, and not
  reserved to the implementation (``__x``, ``_X``): characters outside
  ``[A-Za-z0-9_]`` become ``_``, a leading digit gets a ``_`` prefix, a
  reserved word gets a ``_`` suffix (``default`` -> ``default_``) and a
  reserved prefix a ``v`` (``__x`` -> ``v__x``);
* :class:`Namer` makes names unique within one scope: a name already taken
  gets ``_1``, ``_2``, ... (first come, first served, in IR order: the
  result is deterministic);
* :func:`assign_c_names` names every file-scope thing of one model -- the
  interface (fixed names derived from the model name), the pools' macros,
  fields and arrays, the IR's symbols -- and the fields of the input and
  output structs, so that no two distinct things share a C name.

The C printer, ``tvmgen_<m>.h``/``tvmgen_<m>.c`` and ``metadata.json`` all read
the names from the :class:`CNames` this returns, so a renamed name is renamed
at its definition and at every use alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from usmp.lowering.dsp import PRELUDE_HELPERS
from usmp.lowering.requant import INTERNAL

C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed
    sizeof static struct switch typedef union unsigned void volatile while
    _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn
    _Static_assert _Thread_local bool true false alignas alignof constexpr
    nullptr static_assert thread_local typeof typeof_unqual""".split()
)
"""C99, C11 and C23 keywords."""

CPP_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t
    char32_t class compl concept consteval constexpr constinit const_cast
    co_await co_return co_yield decltype delete dynamic_cast explicit export
    false final friend import module mutable namespace new noexcept not not_eq
    nullptr operator or or_eq override private protected public
    reinterpret_cast requires static_assert static_cast template this
    thread_local throw true try typeid typename using virtual wchar_t xor
    xor_eq""".split()
)
"""C++ keywords and identifiers with special meaning (the C is also C++)."""

_MATH = frozenset(
    f"{name}{suffix}"
    for name in """exp exp2 expm1 log log2 log10 log1p sqrt cbrt tanh sinh cosh
    sin cos tan atan asin acos asinh acosh atanh erf erfc floor ceil round
    lround llround trunc fabs pow atan2 copysign fma nearbyint rint lrint fmax
    fmin fmod remainder ldexp frexp modf hypot tgamma lgamma""".split()
    for suffix in ("", "f", "l")
)

LIBRARY_NAMES = (
    frozenset(
        """int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
    intptr_t uintptr_t intmax_t uintmax_t size_t ptrdiff_t max_align_t
    NULL offsetof errno assert main memcpy memset memmove memcmp
    INFINITY NAN HUGE_VAL HUGE_VALF isnan isinf isfinite signbit fpclassify
    INT8_MIN INT8_MAX INT16_MIN INT16_MAX INT32_MIN INT32_MAX INT64_MIN
    INT64_MAX UINT8_MAX UINT16_MAX UINT32_MAX UINT64_MAX SIZE_MAX PTRDIFF_MIN
    PTRDIFF_MAX INT8_C INT16_C INT32_C INT64_C UINT8_C UINT16_C UINT32_C
    UINT64_C USMP_ALIGNED USMP_DSP usmp_lane usmp_pair""".split()
    )
    | _MATH
    | PRELUDE_HELPERS
    | INTERNAL
)
"""Names the generated code uses from ``<stdint.h>``, ``<stddef.h>``,
``<stdbool.h>``, ``<string.h>``, ``<math.h>``, and our own macros and DSP
and requantisation helpers (``dsp.PRELUDES``)."""

RESERVED = C_KEYWORDS | CPP_KEYWORDS | LIBRARY_NAMES
"""Identifiers no generated name may take."""

_RESERVED_PREFIX = re.compile(r"_[A-Z_]")

RUN_LOCALS = ("inputs", "outputs", "workspaces", "parameters", "io")
"""Parameters and locals of ``run`` / ``map_*`` in metadata.c: no file-scope
name may take them (they would hide it)."""


def is_reserved(name: str) -> bool:
    """Is ``name`` a keyword, a library name we use, or reserved to the C
    implementation (``__x``, ``_X``)?"""
    return name in RESERVED or _RESERVED_PREFIX.match(name) is not None


def sanitize(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_]`` as ``_`` and a
    ``_`` before a leading digit (TVM's ``SanitizeName``)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return ident if ident and not ident[0].isdigit() else f"_{ident}"


def c_identifier(name: str) -> str:
    """A C (and C++) identifier for ``name`` that is not reserved; ``name``
    itself when it already is one."""
    ident = sanitize(name)
    if _RESERVED_PREFIX.match(ident):
        ident = f"v{ident}"
    if ident in RESERVED:
        ident = f"{ident}_"
    return ident


class CNameError(ValueError):
    """A name that must be kept as it is (an external function) is taken."""


class Namer:
    """Unique, unreserved C identifiers within one scope.

    ``fresh`` takes the first of ``base``, ``base_1``, ``base_2``... that is
    free; it remembers where each base stopped, so naming n values ``v``
    costs O(n), not O(n^2) (a 20,000-operator function). Names are only
    ever added to ``used``, except by assigning ``used`` (a closed scope's
    names free again), which forgets those positions."""

    def __init__(self, taken: Iterable[str] = ()):
        self._used: set[str] = set(taken)
        self._next: dict[str, int] = {}
        """Base -> the suffix to try first (every smaller one is taken)."""

    @property
    def used(self) -> set[str]:
        return self._used

    @used.setter
    def used(self, names: set[str]) -> None:
        self._used = names
        self._next.clear()

    def fresh(self, hint: str) -> str:
        """``c_identifier(hint)``, with ``_N`` appended if that is taken."""
        base = c_identifier(hint)
        stem = base.rstrip("_") or base
        n = self._next.get(base, 0)
        name = f"{stem}_{n}" if n else base
        while name in self._used or is_reserved(name):
            n += 1
            name = f"{stem}_{n}"
        self._used.add(name)
        self._next[base] = n + 1
        return name

    def claim(self, names: Iterable[str]) -> None:
        """Take ``names`` as they are (fixed names nothing else may take)."""
        self.used.update(names)


@dataclass(frozen=True)
class PoolNames:
    """The C names of one pool."""

    field: str
    """Member of ``TVMWorkspaces_<m>``/``TVMParameters_<m>``."""
    array: str
    """The static array metadata.c defines when the library owns the pool."""
    macro: str
    """Stem of its macros: ``<macro>_WORKSPACE_BUFFER_SIZE``, ..."""
    tvmgen: str = ""
    """Stem of its TVM-style macro: ``<tvmgen>_WORKSPACE_POOL_SIZE`` /
    ``<tvmgen>_CONSTANT_POOL_SIZE`` (``TVMGEN_<MODEL>_<POOL>``)."""


@dataclass(frozen=True)
class QuantNames:
    """The interface names of one quantised input or output: its macros
    (``TVMGEN_<MODEL>_<TENSOR>_SCALE``/``_ZERO_POINT``, the stem of its
    ``_SIZE``) and its helpers (``tvmgen_<model>_quantize_<tensor>``,
    ``tvmgen_<model>_dequantize_<tensor>``)."""

    scale: str
    zero_point: str
    quantize: str
    dequantize: str


@dataclass(frozen=True)
class CNames:
    """The C names of one module (see :func:`assign_c_names`)."""

    model: str
    """The model name as it appears in the interface names (``tvmgen_<m>_``)."""
    symbols: dict[str, str]
    """IR symbol (function or global) -> its C name."""
    pools: dict[str, PoolNames]
    inputs: list[str]
    """Fields of ``TVMInputs_<m>``, in input order."""
    outputs: list[str]
    """Fields of ``TVMOutputs_<m>``, in output order."""
    file_scope: frozenset[str]
    """Every file-scope identifier and macro: function parameters and locals
    must not take them."""
    io_macros: tuple[str, ...] = ()
    """TVM-style size macros of the inputs, then the outputs
    (``TVMGEN_<MODEL>_<TENSOR>_SIZE``, bytes)."""
    quantization: tuple[QuantNames | None, ...] = ()
    """The quantisation macros and helpers of the inputs, then the outputs
    (None for a tensor that is not quantised)."""

    def symbol(self, name: str) -> str:
        return self.symbols.get(name, name)


def interface_names(model: str) -> list[str]:
    """The fixed file-scope names of model ``model``'s interface."""
    upper = model.upper()
    return [
        *(
            f"tvmgen_{model}_{what}"
            for what in ("run", "run_model", "init", "map_inputs", "map_outputs")
        ),
        *(
            f"tvmgen_{model}_{tag}"
            for tag in ("inputs", "outputs", "workspace_pools", "parameter_pools")
        ),
        *(f"TVM{what}_{model}" for what in ("Inputs", "Outputs")),
        *(f"TVM{what}_{model}" for what in ("Workspaces", "Parameters")),
        f"TVMGEN_{upper}_H_",
        f"TVMGEN_{upper}_PARAMETERS_H_",
        f"TVMGEN_{upper}_WORKSPACE_SIZE",
    ]


def library_files(model: str) -> dict[str, str]:
    """The file names of model ``model``'s C library, by role: every name
    starts with ``tvmgen_<model>`` so that two models' files can share one
    folder (TVM's interface header is ``tvmgen_<model>.h`` too)."""
    stem = f"tvmgen_{model}"
    return {
        "header": f"{stem}.h",
        "source": f"{stem}.c",
        "operators": f"{stem}_operators.c",
        "aot_main": f"{stem}_aot_main.c",
        "parameters": f"{stem}_parameters.h",
    }


def pool_kind(kind: bool | str) -> str:
    """A pool's kind (``workspace``, ``constant``, ``persistent``); ``True`` /
    ``False`` are the older workspace / constant flags."""
    if isinstance(kind, bool):
        return "workspace" if kind else "constant"
    return kind


def tvmgen_pool_macros(stem: str, kind: bool | str) -> list[str]:
    """TVM's interface macros of one pool (``src/target/source/interface_c.cc``;
    a persistent pool's is ours, in the same style)."""
    kind = pool_kind(kind)
    if kind == "constant":
        return [f"{stem}_CONSTANT_POOL_SIZE", f"{stem}_CONSTANT_POOL_DATA"]
    return [f"{stem}_{kind.upper()}_POOL_SIZE"]


def _unique_stem(base: str, macros: Callable[[str], list[str]], files: Namer) -> str:
    """``base`` or ``base_N``: the first stem none of whose ``macros`` is taken;
    its macros are claimed."""
    stem, n = base, 0
    while any(m in files.used for m in macros(stem)):
        n += 1
        stem = f"{base}_{n}"
    files.claim(macros(stem))
    return stem


def pool_macros(stem: str, kind: bool | str) -> list[str]:
    kind = pool_kind(kind)
    upper = "PARAMETER" if kind == "constant" else kind.upper()
    names = [f"{stem}_{upper}_BUFFER_SIZE", f"{stem}_{upper}_BUFFER_ALIGNMENT"]
    return names if kind != "constant" else [*names, f"{stem}_PARAMETER_DATA"]


def assign_c_names(
    *,
    model: str | None,
    entry: str | None,
    symbols: Sequence[str],
    externs: Sequence[str] = (),
    pools: Sequence[tuple[str, bool | str]] = (),
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    external: Iterable[str] = (),
    quantized: Sequence[bool] = (),
) -> CNames:
    """Name everything of one model, in a fixed order: the interface (fixed),
    the entry function ``entry`` (kept), functions declared but defined
    elsewhere (``externs``, kept: ``CNameError`` if one is reserved or taken),
    each pool's macros, the other IR ``symbols`` (in IR order), the pool
    arrays; then the pool fields and the input/output fields, each struct its
    own scope. ``pools`` is (name, kind) in argument order (kind
    ``workspace``/``constant``/``persistent``, or True/False for the first two);
    ``external`` the library functions the code calls (``expf``, ...);
    ``quantized`` says which inputs, then outputs, are quantised (their
    scale/zero-point macros share the stem of their size macro, named last
    with their quantise/dequantise helpers: nothing else changes name).
    Without a ``model`` (a module that is no model) only symbols are named."""
    model = sanitize(model) if model is not None else ""
    files = Namer(external)
    if model:
        files.claim(interface_names(model))
        files.claim(RUN_LOCALS)
    names: dict[str, str] = {}
    if entry is not None:  # tvmgen_<model>___tvm_main__: ours, and kept
        names[entry] = sanitize(entry)
        files.claim([names[entry]])
    for symbol in externs:
        if symbol in names:
            continue
        if symbol in files.used or is_reserved(symbol) or sanitize(symbol) != symbol:
            raise CNameError(
                f"function @{symbol} is defined outside the generated code, so it "
                "cannot be renamed, but its name is not a free C identifier "
                "(it is reserved or taken by a generated name)"
            )
        names[symbol] = symbol
        files.claim([symbol])
    macros: dict[str, str] = {}
    for pool, workspace in pools:
        base = f"TVM_{model.upper()}_{c_identifier(pool).upper()}"
        macros[pool] = _unique_stem(
            base, lambda s, w=workspace: pool_macros(s, w), files
        )
    tvmgen: dict[str, str] = {}
    for pool, workspace in pools:
        base = f"TVMGEN_{model.upper()}_{c_identifier(pool).upper()}"
        tvmgen[pool] = _unique_stem(
            base, lambda s, w=workspace: tvmgen_pool_macros(s, w), files
        )
    for symbol in symbols:
        if symbol not in names:
            names[symbol] = files.fresh(symbol)
    # members: no keyword, no macro (a macro would replace the member's name)
    macro_names = [m for m in files.used if m.isupper() or m.startswith("TVM")]
    pool_fields = Namer(macro_names)
    named_pools: dict[str, PoolNames] = {}
    for pool, _ in pools:
        field = pool_fields.fresh(pool)
        named_pools[pool] = PoolNames(
            field, files.fresh(f"tvmgen_{model}_{field}"), macros[pool], tvmgen[pool]
        )
    input_fields = Namer(macro_names)
    output_fields = Namer(macro_names)
    in_names = [input_fields.fresh(n) for n in inputs]
    out_names = [output_fields.fresh(n) for n in outputs]
    fields = [*in_names, *out_names]
    is_quantized = [*quantized, *(False for _ in fields[len(quantized) :])]
    stems = [
        _unique_stem(
            f"TVMGEN_{model.upper()}_{n.upper()}",
            lambda s, q=q: [f"{s}_{m}" for m in _io_macro_kinds(q)],
            files,
        )
        for n, q in zip(fields, is_quantized, strict=True)
    ]
    io_macros = tuple(f"{stem}_SIZE" for stem in stems)
    quantization = tuple(
        _quant_names(model, stem, field, files) if q else None
        for stem, field, q in zip(stems, fields, is_quantized, strict=True)
    )
    return CNames(
        model,
        names,
        named_pools,
        in_names,
        out_names,
        frozenset(files.used),
        io_macros,
        quantization,
    )


def _io_macro_kinds(quantized: bool) -> list[str]:
    return ["SIZE", "SCALE", "ZERO_POINT"] if quantized else ["SIZE"]


def _quant_names(model: str, stem: str, field: str, files: Namer) -> QuantNames:
    """The quantisation names of the tensor with macro stem ``stem`` and
    field ``field``: helpers ``tvmgen_<model>_quantize_<field>`` (or
    ``..._<field>_N``, the first suffix free for both), claimed."""
    suffix = _unique_stem(
        field,
        lambda s: [f"tvmgen_{model}_quantize_{s}", f"tvmgen_{model}_dequantize_{s}"],
        files,
    )
    return QuantNames(
        f"{stem}_SCALE",
        f"{stem}_ZERO_POINT",
        f"tvmgen_{model}_quantize_{suffix}",
        f"tvmgen_{model}_dequantize_{suffix}",
    )
