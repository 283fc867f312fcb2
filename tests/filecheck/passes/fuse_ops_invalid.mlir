// RUN: usmp-opt %s -p fuse-ops --split-input-file --verify-diagnostics

// expected-error@+4 {{'relay.relu' is nested in 'scf.execute_region'; fuse-ops only fuses relay operators at the top level of a function (control flow is not supported)}}
func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = scf.execute_region -> tensor<4xf32> {
    %2 = relay.relu %0 : tensor<4xf32> -> tensor<4xf32>
    scf.yield %2 : tensor<4xf32>
  }
  func.return %1 : tensor<4xf32>
}

// -----

// expected-error@+2 {{'relay.relu' produces tensor<?x4xf32>; fuse-ops needs statically shaped tensors}}
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = relay.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}

// -----

// expected-error@+1 {{@blocks has 2 blocks; fuse-ops expects straight-line relay dataflow in a single block}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
^unreachable:
  func.return %x : tensor<4xf32>
}
