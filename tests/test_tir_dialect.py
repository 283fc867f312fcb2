"""Facts of the tir ops beyond their syntax (that is ``tests/filecheck/
dialects/tir``): the allocations' shared base and traits."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.traits import HasParent, MemoryAllocEffect
from xdsl.transforms.dead_code_elimination import region_dce

from usmp.dialects import new_context, tir

ALLOCATIONS = (tir.AllocateOp, tir.AllocateConstOp, tir.AllocateStateOp)


def test_allocations_share_one_base_and_its_traits() -> None:
    for op in ALLOCATIONS:
        assert issubclass(op, tir.AllocationOp)
        assert op.has_trait(MemoryAllocEffect())
        assert op.get_trait(HasParent) is not None
        assert {"name_hint", "candidate_pools", "pool_allocation"} <= set(
            op.get_irdl_definition().properties
        )


def test_dead_code_elimination_keeps_an_unused_allocation() -> None:
    module = Parser(
        new_context(),
        """
        func.func @f() attributes {tir.prim_func} {
          %0 = tir.allocate {name_hint = "scratch"} : memref<16xi8>
          %1 = tir.allocate_const {name_hint = "c", value = dense<1> : tensor<4xi8>} : memref<4xi8>
          func.return
        }
        """,
    ).parse_module()
    assert isinstance(module, ModuleOp)
    f = next(iter(module.ops))
    region_dce(f.regions[0])
    kinds = [type(op) for op in f.walk()]
    assert tir.AllocateOp in kinds and tir.AllocateConstOp in kinds
