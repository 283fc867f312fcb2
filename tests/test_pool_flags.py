"""The RFC's pool flags (usmp.tools.pool_flags) on their own; the driver's
use of them, and the messages it prints, are in test_models_compile.py."""

import pytest

from usmp.passes.usmp_pools import (
    DEFAULT_CONSTANT_POOL,
    DEFAULT_WORKSPACE_POOL,
    parse_pools_option,
)
from usmp.tools.compile_options import Pool
from usmp.tools.pool_flags import (
    PoolFlag,
    PoolFlagError,
    parse_pool_flags,
    pools_from_flags,
    pools_option,
    resolve_pools,
    split_pool_flags,
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
    # usmp's pools option says the same
    (attr, *_) = parse_pools_option(pools_option(pools))
    assert (attr.pool_name.data, attr.size.data, attr.alignment.data) == (
        "dtcm",
        64,
        32,
    )
    assert list(attr.access_map().items()) == [("c", "rw"), ("npu", "ro")]


def test_flags_become_the_options_pools() -> None:
    assert pools_from_flags(
        "sram", "flash", {("parameter", "flash"): "target=c,npu;align=8"}, "st"
    ) == (
        Pool("sram", "workspace"),
        Pool("flash", "constant", 0, 8, ("c", "npu")),
        Pool("st", "persistent"),
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
    assert resolve_pools([], 16, 16) == []
    assert [(p.name, p.alignment) for p in resolve_pools([], 64, 16)] == [
        (DEFAULT_WORKSPACE_POOL, 64),
        (DEFAULT_CONSTANT_POOL, 16),
    ]
    given = [Pool("sram", alignment=8)]
    assert resolve_pools(given, 64, 64) == [
        PoolFlag("sram", "workspace", 0, 8, (("c", "rw"),))
    ]
