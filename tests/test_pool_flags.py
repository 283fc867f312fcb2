"""The RFC's pool flags (usmp.tools.pool_flags) on their own; the driver's
use of them, and the messages it prints, are in test_models_compile.py."""

import pytest

from usmp.passes.usmp_pools import DEFAULT_CONSTANT_POOL, DEFAULT_WORKSPACE_POOL
from usmp.tools.pool_flags import (
    PoolFlag,
    PoolFlagError,
    parse_pool_flags,
    pool_info_attrs,
    split_pool_flags,
    with_default_alignment,
)


def test_split_takes_out_per_pool_flags_in_both_spellings() -> None:
    rest, specs = split_pool_flags(
        [
            "model.tflite",
            "--usmp-workspace-pool-sram=size=64",
            "--usmp-parameter-pool-flash",
            "target=c",
            "--usmp-workspace-pools=sram",
        ]
    )
    assert rest == ["model.tflite", "--usmp-workspace-pools=sram"]
    assert specs == {
        ("workspace", "sram"): "size=64",
        ("parameter", "flash"): "target=c",
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--usmp-workspace-pool-sram"], "needs a value"),
        (
            ["--usmp-parameter-pool-f=size=1", "--usmp-parameter-pool-f=size=2"],
            "--usmp-parameter-pool-f is given twice",
        ),
    ],
)
def test_split_rejects(argv: list[str], message: str) -> None:
    with pytest.raises(PoolFlagError, match=message):
        split_pool_flags(argv)


def test_parse_orders_pools_and_fills_defaults() -> None:
    pools = parse_pool_flags(
        "dtcm, sram",
        "flash",
        {("workspace", "dtcm"): "target=c:rw,npu:ro;size=64;align=32"},
        workspace_alignment=8,
        constant_alignment=4,
    )
    assert pools == [
        PoolFlag("dtcm", "workspace", 64, 32, (("c", "rw"), ("npu", "ro"))),
        PoolFlag("sram", "workspace", 0, 8, (("c", "rw"),)),
        PoolFlag("flash", "constant", 0, 4, (("c", "ro"),)),
    ]
    (attr, *_) = pool_info_attrs(pools)
    assert (attr.pool_name.data, attr.size.data, attr.alignment.data) == (
        "dtcm",
        64,
        32,
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "align=24",
            "alignment 24 is not accepted; expected a power of two from 1 to 4096",
        ),
        ("size=-1", "size='-1' is not a number of bytes"),
        ("target=npu:wo", "target entry 'npu:wo' is not TARGET"),
        ("bytes=1", "'bytes=1' is not KEY=VALUE"),
    ],
)
def test_parse_rejects_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(PoolFlagError, match=message):
        parse_pool_flags("sram", None, {("workspace", "sram"): spec}, 16, 16)


def test_default_alignment_applies_to_the_default_pools_only_when_changed() -> None:
    assert with_default_alignment([], 16, 16) == []
    assert [(p.name, p.alignment) for p in with_default_alignment([], 64, 16)] == [
        (DEFAULT_WORKSPACE_POOL, 64),
        (DEFAULT_CONSTANT_POOL, 16),
    ]
    given = [PoolFlag("sram", "workspace", 0, 8, (("c", "rw"),))]
    assert with_default_alignment(given, 64, 64) == given
