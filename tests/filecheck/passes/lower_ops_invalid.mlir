// RUN: usmp-opt %s -p lower-ops --split-input-file --verify-diagnostics

// expected-error@+3 {{'relay.on_device' cannot be lowered inside a primitive function; expected relay operators (relay.add, relay.argmax, relay.argmin, relay.avg_pool2d,}}
func.func @structural(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0>} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// expected-error@+4 {{primitive function @two_results must return one tensor or one relay.tuple of tensors}}
func.func @two_results(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {relay.primitive} {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.relu %0 : tensor<4xf32> -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{argument 0 of @dynamic has type tensor<?xf32>; lower-ops needs statically shaped tensors}}
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> attributes {relay.primitive} {
  %0 = relay.relu %x : tensor<?xf32> -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}
