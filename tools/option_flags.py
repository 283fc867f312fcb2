"""Command-line flags generated from the options' declarations.

``add_flags(parser, CompileOptions)`` declares one argparse flag per field of
an options dataclass (``usmp.tools.compile_options``): its names, kind and
choices from the field's ``Flag`` metadata, its help from the docstring
written after the field (as ``usmp-opt --help`` reads pass options), with
the default appended. ``options_from_args`` reads the parsed flags back into
the dataclass, which checks them. A flag's spelling, help and default are
thus declared once, next to the field.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, TypeVar

from usmp.tools.compile_options import Flag, field_flag
from usmp.tools.pass_help import field_docs

T = TypeVar("T")

_TYPES: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "str | None": str,
    "int | None": int,
    "float | None": float,
}
_POOL_HELP = {
    "--usmp-workspace-pools": "workspace pools, in fallback order",
    "--usmp-parameter-pools": "parameter (constant) pools, in order",
    "--usmp-persistent-pools": "persistent pools (state kept across runs), in order",
}
POOL_EPILOG = (
    "Per-pool flags: --usmp-workspace-pool-NAME=SPEC, --usmp-parameter-pool-NAME"
    '=SPEC, --usmp-persistent-pool-NAME=SPEC with SPEC "target=c:rw,npu:ro;'
    'size=65536;align=16".'
)


def flag_bool(text: str) -> bool:
    """``0``/``1``/``true``/``false``, as TVM's boolean options."""
    value = {"1": True, "true": True, "0": False, "false": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"'{text}' is not 0, 1, true or false")
    return value


def option_help(cls: type, name: str) -> str:
    """The help of field ``name`` of ``cls``: its docstring and default."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    text = field_docs(cls).get(name, "")
    default = f.default
    spelling = field_flag(f)
    if spelling.metavar and spelling.choices is not None:
        text = f"{text} One of: {', '.join(spelling.choices())}."
    if spelling.kind == "on-off":
        return f"{text} (default: {'on' if default else 'off'})"
    if default in (None, False, (), "") or spelling.kind == "pools":
        return text
    return f"{text} (default: {default})"


def add_flags(parser: argparse.ArgumentParser, cls: type) -> None:
    """One flag per field of the options dataclass ``cls`` (module note)."""
    for f in dataclasses.fields(cls):
        spelling: Flag = field_flag(f)
        names = spelling.names
        common: dict[str, Any] = {"dest": f.name, "help": option_help(cls, f.name)}
        if spelling.metavar:
            common["metavar"] = spelling.metavar
        if spelling.kind == "switch":
            parser.add_argument(*names, action="store_true", **common)
        elif spelling.kind == "on-off":
            default = "on" if f.default else "off"
            parser.add_argument(
                *names, choices=("on", "off"), default=default, **common
            )
        elif spelling.kind == "0-1":
            common.setdefault("metavar", "0|1")
            parser.add_argument(*names, type=flag_bool, default=f.default, **common)
        elif spelling.kind == "append":
            parser.add_argument(*names, action="append", default=[], **common)
        elif spelling.kind == "pools":
            for name in names:
                parser.add_argument(
                    name, metavar="POOL[,POOL...]", help=_POOL_HELP[name]
                )
        else:
            choices = spelling.choices() if spelling.choices is not None else None
            parser.add_argument(
                *names,
                type=_TYPES[str(f.type)],
                choices=choices,
                default=f.default,
                **common,
            )


def options_from_args(cls: type[T], args: argparse.Namespace, **given: Any) -> T:
    """The fields of ``cls`` from the parsed ``args`` (``given`` fills the
    fields the flags do not give, e.g. the pools); the dataclass checks them."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # pyright: ignore[reportArgumentType]
        spelling = field_flag(f)
        if f.name in given:
            values[f.name] = given[f.name]
        elif spelling.kind == "pools":
            continue
        elif spelling.kind == "on-off":
            values[f.name] = getattr(args, f.name) == "on"
        elif spelling.kind == "append":
            values[f.name] = tuple(getattr(args, f.name))
        else:
            values[f.name] = getattr(args, f.name)
    return cls(**values)
