"""Every relay op of the dialect declares its facts once, and every part of
the compiler that must know the op knows it (``docs/adding-an-operator.md``).

For each op class of the ``relay`` dialect:

* exactly one of the traits ``Fusion(pattern, tvm_name)`` (an operator) or
  ``Structural()`` (graph plumbing), ``usmp.dialects.relay_fusion``;
* an operator has a lowering registered by its op class
  (``usmp.lowering.prim_func.OPERATORS``: the element patterns' handlers and
  the operators lowered whole); a structural op has none;
* every op has a semantics in the oracle, registered by its op class
  (``usmp.oracle.relay_interpreter``);
* an operator is emitted by the TFLite importer (the importer's modules name
  its class; ruff keeps no unused import) or is marked ``RelayOnly()``, not
  both;
* every op has a row in the tables of ``docs/relay-ops.md``;
* every relay op class the dialect modules define is in the dialect.

The registries hold nothing else: no lowering or oracle handler for a class
outside the dialect.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from xdsl.ir import Operation

from usmp.dialects.relay import Relay
from usmp.dialects.relay_fusion import Fusion, RelayOnly, Structural
from usmp.lowering.prim_func import OPERATORS
from usmp.oracle.relay_interpreter import (
    _HANDLERS,  # pyright: ignore[reportPrivateUsage]
)

ROOT = Path(__file__).resolve().parents[1]
RELAY_OPS: tuple[type[Operation], ...] = tuple(Relay.operations)


@cache
def importer_classes() -> frozenset[object]:
    """Every object of ``usmp.dialects`` the importer's modules name: imported
    by name (``from usmp.dialects.relay_ops import AddOp``) or through a
    dialect module (``relay.ConstantOp``), at any depth of the file."""
    found: set[object] = set()
    for path in sorted((ROOT / "frontend").glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        modules: dict[str, ModuleType] = {}
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.ImportFrom)
                and node.module is not None
                and node.module.startswith("usmp.dialects")
            ):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(module, alias.name, None)
                if value is None or isinstance(value, ModuleType):
                    modules[alias.asname or alias.name] = importlib.import_module(
                        f"{node.module}.{alias.name}"
                    )
                else:
                    found.add(value)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
            ):
                found.add(getattr(modules[node.value.id], node.attr, None))
    return frozenset(found)


@cache
def documented_ops() -> frozenset[str]:
    """The op names in the first cell of a row of ``docs/relay-ops.md``."""
    names: set[str] = set()
    header = ""  # the first cell of the current table's header row
    for line in (ROOT / "docs" / "relay-ops.md").read_text().splitlines():
        cells = line.strip().split("|")
        if not line.lstrip().startswith("|") or len(cells) <= 2:  # or in a list item
            header = ""
            continue
        if not header:
            header = cells[1].strip()
        elif header == "op":  # not the tables of attributes
            names.update(re.findall(r"`(relay\.[a-z0-9_]+)`", cells[1]))
    return frozenset(names)


def facts(op: type[Operation]) -> list[str]:
    """What ``op`` lacks (or contradicts), as sentences; empty: complete."""
    missing: list[str] = []
    fusion = op.get_traits_of_type(Fusion)
    structural = op.get_traits_of_type(Structural)
    if len(fusion) + len(structural) != 1:
        missing.append(
            "declares neither Fusion(pattern, tvm_name) nor Structural() "
            "(exactly one is required)"
            if not fusion and not structural
            else f"declares {len(fusion)} Fusion and {len(structural)} Structural"
        )
    if fusion and not fusion[0].tvm_name:
        missing.append("has an empty TVM name in its Fusion trait")
    if fusion and op not in OPERATORS:
        missing.append("has no lowering (usmp.lowering, registered by op class)")
    if structural and op in OPERATORS:
        missing.append("is structural but has a lowering")
    if op not in _HANDLERS:
        missing.append("has no oracle semantics (usmp.oracle.relay_interpreter)")
    if fusion:
        imported = op in importer_classes()
        relay_only = op.get_trait(RelayOnly) is not None
        if not imported and not relay_only:
            missing.append(
                "is neither emitted by the TFLite importer (usmp.frontend) nor "
                "marked RelayOnly()"
            )
        if imported and relay_only:
            missing.append("is marked RelayOnly() but the TFLite importer emits it")
    if op.name not in documented_ops():
        missing.append("has no row in docs/relay-ops.md")
    return missing


@pytest.mark.parametrize("op", RELAY_OPS, ids=lambda op: op.name)
def test_op_declares_every_fact(op: type[Operation]) -> None:
    missing = facts(op)
    assert not missing, f"{op.name} ({op.__name__}) " + "; ".join(missing)


def test_every_relay_op_class_is_in_the_dialect() -> None:
    """An op class defined in ``dialects/relay*.py`` but missing from the
    dialect's op lists would escape every check above."""
    defined = {
        value
        for path in sorted((ROOT / "dialects").glob("relay*.py"))
        for value in vars(
            importlib.import_module(f"usmp.dialects.{path.stem}")
        ).values()
        if isinstance(value, type)
        and issubclass(value, Operation)
        and getattr(value, "name", "").startswith("relay.")
    }
    assert defined <= set(RELAY_OPS), sorted(op.name for op in defined - set(RELAY_OPS))


def test_registries_hold_only_relay_ops() -> None:
    assert set(OPERATORS) <= set(RELAY_OPS), set(OPERATORS) - set(RELAY_OPS)
    assert set(_HANDLERS) <= set(RELAY_OPS), set(_HANDLERS) - set(RELAY_OPS)
    documented = {op.name for op in RELAY_OPS}
    assert documented_ops() <= documented, documented_ops() - documented


def test_a_missing_fact_is_named() -> None:
    """The check is not vacuous: an op class nobody registered lacks
    everything, and says so."""
    from xdsl.irdl import irdl_op_definition, traits_def

    from usmp.dialects.relay_base import RelayOperator
    from usmp.dialects.relay_fusion import OpPattern

    @irdl_op_definition
    class NewOp(RelayOperator):
        name = "relay.new_op"
        traits = traits_def(Fusion(OpPattern.ELEMWISE, "new_op"))

    assert facts(NewOp) == [
        "has no lowering (usmp.lowering, registered by op class)",
        "has no oracle semantics (usmp.oracle.relay_interpreter)",
        "is neither emitted by the TFLite importer (usmp.frontend) nor marked "
        "RelayOnly()",
        "has no row in docs/relay-ops.md",
    ]
