"""The ``pools`` option of the usmp passes and pool resolution."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ArrayAttr, ModuleOp

from usmp.dialects.tir import POOLS, PoolInfoAttr
from usmp.passes.usmp_pools import (
    PoolSpecError,
    can_hold,
    parse_pools_option,
    resolve_pools,
)


def _describe(
    pools: list[PoolInfoAttr],
) -> list[tuple[str, str, int, int, dict[str, str]]]:
    return [
        (p.pool_name.data, p.kind.data, p.size.data, p.alignment.data, p.access_map())
        for p in pools
    ]


def test_parse_full_syntax() -> None:
    pools = parse_pools_option(
        "dtcm:workspace:1000:align=8, sram:workspace:size=65536:access=c/rw+npu/rw,"
        "flash:constant:access=c/ro+npu/ro"
    )
    assert _describe(pools) == [
        ("dtcm", "workspace", 1000, 8, {"c": "rw"}),
        ("sram", "workspace", 65536, 16, {"c": "rw", "npu": "rw"}),
        ("flash", "constant", 0, 16, {"c": "ro", "npu": "ro"}),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "has an empty entry"),
        ("sram:workspace,", "has an empty entry"),
        ("sram", "pool 'sram': missing kind"),
        ("9sram:workspace", "'9sram' is not a valid pool name"),
        ("sram:heap", "kind 'heap' is not one of workspace, constant"),
        ("sram:workspace:-1", "size '-1' is not a non-negative integer"),
        ("sram:workspace:align=0", "align=0 is not a positive power of two"),
        ("sram:workspace:align=24", "align=24 is not a positive power of two"),
        ("sram:workspace:access=c", "access entry 'c' is not TARGET/MODE"),
        ("sram:workspace:access=c/wo", "access entry 'c/wo' is not TARGET/MODE"),
        ("sram:workspace:speed=fast", "unknown key 'speed'"),
        ("sram:workspace:16:32", "'32' is not KEY=VALUE"),
        ("a:workspace,a:constant", "pool 'a' is given twice"),
    ],
)
def test_parse_errors_say_what_is_accepted(text: str, message: str) -> None:
    with pytest.raises(PoolSpecError) as info:
        parse_pools_option(text)
    assert message in str(info.value)
    assert str(info.value).endswith('e.g. "sram:workspace:65536,flash:constant"')


def test_resolution_order_and_defaults() -> None:
    module = ModuleOp([])
    defaults = resolve_pools(module, "")
    assert _describe(defaults) == [
        ("global_workspace", "workspace", 0, 16, {"c": "rw"}),
        ("global_const", "constant", 0, 16, {"c": "ro"}),
    ]
    module.attributes[POOLS] = ArrayAttr([PoolInfoAttr("sram", "workspace", 64)])
    # the module's pools, completed with a default constant pool
    assert [p.pool_name.data for p in resolve_pools(module, "")] == [
        "sram",
        "global_const",
    ]
    # the option wins over the module attribute
    assert [p.pool_name.data for p in resolve_pools(module, "rom:constant")] == [
        "rom",
        "global_workspace",
    ]


def test_target_access() -> None:
    shared = PoolInfoAttr("shared", "workspace", access=[("c", "rw"), ("npu", "ro")])
    assert can_hold(shared, "workspace", ["c"])
    assert not can_hold(shared, "workspace", ["c", "npu"])  # npu may only read
    assert not can_hold(shared, "constant", ["c"])  # wrong kind
    rom = PoolInfoAttr("rom", "constant", access=[("c", "ro"), ("npu", "rw")])
    assert can_hold(rom, "constant", ["c", "npu"])  # any access reads
    assert not can_hold(rom, "constant", ["dsp"])
