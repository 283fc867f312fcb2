"""Command-line flags generated from the options' declarations.

``add_flags(parser, CompileOptions)`` declares one argparse flag per field of
an options dataclass (``usmp.tools.compile_options``): its names, kind and
choices from the field's ``Flag`` metadata, its help from the docstring
written after the field (as ``usmp-opt --help`` reads pass options), with
the default appended. ``options_from_args`` reads the parsed flags back into
the dataclass, which checks them. A flag's spelling, help and default are
thus declared once, next to the field.

Reading the docstrings parses the source (30 ms), so a flag's help is
written only when ``--help`` prints it: the parser's formatter is
``OptionHelpFormatter``, which asks ``option_help`` for every flag
``document`` marked.
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


class OptionHelpFormatter(argparse.HelpFormatter):
    """Writes the help of a ``document``-ed flag when help is printed."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        doc = getattr(action, _DOC, None)
        if doc is None:
            return super()._get_help_string(action)
        return option_help(*doc).replace("%", "%%")


_DOC = "usmp_option_doc"


def document(action: argparse.Action, cls: type, name: str) -> argparse.Action:
    """``action``'s help is field ``name`` of ``cls``'s (``option_help``),
    written by ``OptionHelpFormatter``."""
    setattr(action, _DOC, (cls, name))
    action.help = name  # a placeholder: argparse lists only flags with help
    return action


def add_flags(parser: argparse.ArgumentParser, cls: type) -> None:
    """One flag per field of the options dataclass ``cls`` (module note);
    ``parser`` formats help with ``OptionHelpFormatter``."""
    for f in dataclasses.fields(cls):
        spelling: Flag = field_flag(f)
        names = spelling.names
        common: dict[str, Any] = {"dest": f.name}
        if spelling.metavar:
            common["metavar"] = spelling.metavar
        if spelling.kind == "pools":
            for name in names:
                parser.add_argument(
                    name, metavar="POOL[,POOL...]", help=_POOL_HELP[name]
                )
            continue
        if spelling.kind == "switch":
            action = parser.add_argument(*names, action="store_true", **common)
        elif spelling.kind == "on-off":
            default = "on" if f.default else "off"
            action = parser.add_argument(
                *names, choices=("on", "off"), default=default, **common
            )
        elif spelling.kind == "0-1":
            common.setdefault("metavar", "0|1")
            action = parser.add_argument(
                *names, type=flag_bool, default=f.default, **common
            )
        elif spelling.kind == "append":
            action = parser.add_argument(*names, action="append", default=[], **common)
        else:
            choices = spelling.choices() if spelling.choices is not None else None
            action = parser.add_argument(
                *names,
                type=_TYPES[str(f.type)],
                choices=choices,
                default=f.default,
                **common,
            )
        document(action, cls, f.name)


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
