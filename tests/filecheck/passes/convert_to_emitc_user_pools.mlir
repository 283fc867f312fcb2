// RUN: usmp-opt %s -p 'fuse-ops,lower-ops,aot-lower-main,usmp{pools="sram:workspace,dtcm:workspace,flash:constant"},convert-to-emitc{user_pools="sram","dtcm","flash"}' | FileCheck %s
// RUN: usmp-opt %s -p 'fuse-ops,lower-ops,aot-lower-main,usmp{pools="sram:workspace,dtcm:workspace,flash:constant"},convert-to-emitc{user_pools="sram","dtcm","flash"}' -t c-library | FileCheck %s --check-prefix=LIB
// RUN: not usmp-opt %s -p 'fuse-ops,lower-ops,aot-lower-main,usmp,convert-to-emitc{user_pools="sram"}' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The pools the application provides are marked in usmp.pools; dtcm holds
// nothing (sram has room for everything), so it is not part of the interface.
// CHECK: usmp.pools = [{name = "sram", kind = "workspace", size = 16 : i64, alignment = 16 : i64, user = true}, {name = "dtcm", kind = "workspace", size = 0 : i64, alignment = 16 : i64}, {name = "flash", kind = "constant", size = 64 : i64, alignment = 16 : i64, user = true}]

// The library takes them from the application (U3) instead of defining them.
// LIB-LABEL: //--- codegen/host/include/tvmgen_default.h
// LIB:       typedef struct tvmgen_default_workspace_pools {
// LIB-NEXT:    uint8_t* sram;
// LIB-NEXT:  } TVMWorkspaces_default;
// LIB:       typedef struct tvmgen_default_parameter_pools {
// LIB-NEXT:    const uint8_t* flash;
// LIB-NEXT:  } TVMParameters_default;
// LIB-LABEL: //--- codegen/host/include/tvmgen_default_parameters.h
// LIB-LABEL: //--- codegen/host/src/tvmgen_default.c
// LIB-NOT:   tvmgen_default_sram[
// LIB-LABEL: //--- example/main.c

// UNKNOWN: convert-to-emitc: user pool(s) sram are not pools of the module (pools: global_workspace, global_const)
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w = relay.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<4x4xf32>
  %0 = relay.dense %x, %w : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %1 = relay.relu %0 : tensor<1x4xf32> -> tensor<1x4xf32>
  %2 = relay.dense %1, %w : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  func.return %2 : tensor<1x4xf32>
}
