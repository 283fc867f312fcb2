"""usmp-opt's passes, registered as lazy factories (nothing imports on start-up).

Flag names, module names and class names say the same thing:
``aot-lower-main`` is ``passes/aot_lower_main.py``'s ``AOTLowerMainPass``.
"""

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass

# flag -> (module under usmp.passes, class name)
_PASSES: dict[str, tuple[str, str]] = {
    "place-operators": ("place_operators", "PlaceOperatorsPass"),
    "plan-devices": ("plan_devices", "PlanDevicesPass"),
    "aot-lower-main": ("aot_lower_main", "AOTLowerMainPass"),
    "fuse-ops": ("fuse_ops", "FuseOpsPass"),
    "patch-stage": ("patch_stage", "PatchStagePass"),
    "dedupe-functions": ("dedupe_functions", "DedupeFunctionsPass"),
    "fold-explicit-padding": ("fold_explicit_padding", "FoldExplicitPaddingPass"),
    "partition-cmsis-nn": ("partition_cmsis_nn", "PartitionCmsisNNPass"),
    "lower-ops": ("lower_ops", "LowerOpsPass"),
    "usmp": ("usmp", "UsmpPass"),
    "convert-to-emitc": ("convert_to_emitc", "ConvertToEmitcPass"),
    "usmp-buffer-info": ("usmp_buffer_info", "UsmpBufferInfoPass"),
    "usmp-plan-memory": ("usmp_plan_memory", "UsmpPlanMemoryPass"),
    "usmp-report": ("usmp_report", "UsmpReportPass"),
    "usmp-validate": ("usmp_validate", "UsmpValidatePass"),
    "usmp-replay": ("usmp_replay", "UsmpReplayPass"),
    "usmp-kernel-direction": ("usmp_kernel_direction", "UsmpKernelDirectionPass"),
    "usmp-convert-pool-allocations": (
        "usmp_convert_pool_allocations",
        "UsmpConvertPoolAllocationsPass",
    ),
}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass of the project, by flag name."""

    def factory(module: str, cls: str) -> Callable[[], type[ModulePass]]:
        return lambda: getattr(import_module(f"usmp.passes.{module}"), cls)

    return {flag: factory(mod, cls) for flag, (mod, cls) in _PASSES.items()}
