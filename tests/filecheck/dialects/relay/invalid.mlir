// RUN: usmp-opt %s --split-input-file --verify-diagnostics

func.func @f(%a: tensor<4xf64>) {
  // expected-error@+1 {{'relay.add' op relay.add: lhs element type f64 is not supported (expected f32, i8, i16, i32, i64 or ui8)}}
  %0 = relay.add %a, %a : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>, %b: tensor<4xi8>) {
  // expected-error@+1 {{'relay.add' op relay.add: operand element types differ (i32 vs i8); insert a relay.cast}}
  %0 = relay.add %a, %b : (tensor<4xi32>, tensor<4xi8>) -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'relay.right_shift' op relay.right_shift: element type f32 is not an integer type}}
  %0 = relay.right_shift %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error@+1 {{'relay.tanh' op relay.tanh: element type i8 is not supported, expected f32}}
  %0 = relay.tanh %a : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error@+1 {{'relay.divide' op relay.divide: element type i32 is not a float type}}
  %0 = relay.divide %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>, %b: tensor<3xi32>) {
  // expected-error@+1 {{'relay.multiply' op relay.multiply: shapes [4] and [3] do not broadcast}}
  %0 = relay.multiply %a, %b : (tensor<4xi32>, tensor<3xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>, %b: tensor<2x1xi32>) {
  // expected-error@+1 {{'relay.subtract' op relay.subtract: result type tensor<4xi32> is wrong, expected tensor<2x4xi32>}}
  %0 = relay.subtract %a, %b : (tensor<4xi32>, tensor<2x1xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error@+1 {{'relay.clip' op relay.clip: a_min 5.0 is greater than a_max 1.0}}
  %0 = relay.clip %a {a_min = 5.0 : f64, a_max = 1.0 : f64} : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error@+1 {{'relay.relu' op relay.relu: result type tensor<4xi8> is wrong, expected tensor<4xi32>}}
  %0 = relay.relu %a : tensor<4xi32> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error@+1 {{'relay.softmax' op relay.softmax: element type i8 is not supported, expected f32}}
  %0 = relay.softmax %a : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xf32>) {
  // expected-error@+1 {{'relay.softmax' op relay.softmax: axis 2 is out of range for rank 2 (expected -2..1)}}
  %0 = relay.softmax %a {axis = 2 : i64} : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xf32>) {
  // expected-error@+1 {{'relay.reshape' op relay.reshape: element type changes from f32 to i32; use relay.cast}}
  %0 = relay.reshape %a : tensor<1x4xf32> -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xf32>) {
  // expected-error@+1 {{'relay.reshape' op relay.reshape: tensor<1x4xf32> has 4 elements but tensor<2x4xf32> has 8}}
  %0 = relay.reshape %a : tensor<1x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xf32>) {
  // expected-error@+1 {{'relay.cast' op relay.cast: result type tensor<4xi8> is wrong, expected tensor<1x4xi8>}}
  %0 = relay.cast %a : tensor<1x4xf32> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xf32>) {
  // expected-error@+1 {{'relay.transpose' op relay.transpose: axes [0, 0] is not a permutation of 0..1}}
  %0 = relay.transpose %a {axes = array<i64: 0, 0>} : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>) {
  // expected-error@+1 {{'relay.pad' op relay.pad: pad_value 0.5 is not representable in i8 (expected an integer in -128..127)}}
  %0 = relay.pad %a {pad_width = array<i64: 0, 0, 1, 1>, pad_value = 0.5 : f64} : tensor<1x4xi8> -> tensor<1x6xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>) {
  // expected-error@+1 {{'relay.pad' op relay.pad: pad_value 200.0 is not representable in i8 (expected an integer in -128..127)}}
  %0 = relay.pad %a {pad_width = array<i64: 0, 0, 1, 1>, pad_value = 200.0 : f64} : tensor<1x4xi8> -> tensor<1x6xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>) {
  // expected-error@+1 {{'relay.pad' op relay.pad: pad_width (before, after per axis) must have 4 values, got 2}}
  %0 = relay.pad %a {pad_width = array<i64: 1, 1>} : tensor<1x4xi8> -> tensor<3x4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>) {
  // expected-error@+1 {{'relay.pad' op relay.pad: pad_width must be >= 0, got [0, 0, -1, 1]}}
  %0 = relay.pad %a {pad_width = array<i64: 0, 0, -1, 1>} : tensor<1x4xi8> -> tensor<1x4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>) {
  // expected-error@+1 {{'relay.pad' op relay.pad: result type tensor<1x5xi8> is wrong, expected tensor<1x6xi8>}}
  %0 = relay.pad %a {pad_width = array<i64: 0, 0, 1, 1>} : tensor<1x4xi8> -> tensor<1x5xi8>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{'relay.concatenate' op relay.concatenate: needs at least one input}}
  %0 = relay.concatenate {axis = 0 : i64} : () -> tensor<1xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>, %b: tensor<1x4xi32>) {
  // expected-error@+1 {{'relay.concatenate' op relay.concatenate: input 1 has element type i32, expected i8 (all inputs must agree)}}
  %0 = relay.concatenate %a, %b {axis = 1 : i64} : (tensor<1x4xi8>, tensor<1x4xi32>) -> tensor<1x8xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>, %b: tensor<2x4xi8>) {
  // expected-error@+1 {{'relay.concatenate' op relay.concatenate: input 1 has shape [2, 4], expected [1, 4] except along axis 1}}
  %0 = relay.concatenate %a, %b {axis = 1 : i64} : (tensor<1x4xi8>, tensor<2x4xi8>) -> tensor<1x8xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>) {
  // expected-error@+1 {{'relay.concatenate' op relay.concatenate: axis -3 is out of range for rank 2 (expected -2..1)}}
  %0 = relay.concatenate %a, %a {axis = -3 : i64} : (tensor<1x4xi8>, tensor<1x4xi8>) -> tensor<1x8xi8>
  func.return
}

// -----

func.func @f(%a: tensor<1x4xi8>) {
  // expected-error@+1 {{'relay.concatenate' op relay.concatenate: result type tensor<1x4xi8> is wrong, expected tensor<1x8xi8>}}
  %0 = relay.concatenate %a, %a {axis = 1 : i64} : (tensor<1x4xi8>, tensor<1x4xi8>) -> tensor<1x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: result type tensor<1x8x8x4xi32> is wrong, expected tensor<1x3x3x4xi32>}}
  %0 = relay.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x8x8x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: layouts NCHW+HWIO are not supported (expected one of NHWC+HWIO, NHWC+OHWI, NCHW+OIHW)}}
  %0 = relay.conv2d %x, %w {data_layout = #relay<data_layout NCHW>} : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x6x6x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: data must have rank 4, got shape [8, 8, 4]}}
  %0 = relay.conv2d %x, %w : (tensor<8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<6x6x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: strides must have 2 values, got 1}}
  %0 = relay.conv2d %x, %w {strides = array<i64: 2>} : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x3x3x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: strides must be >= 1, got [0, 1]}}
  %0 = relay.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x3x3x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: groups must be >= 1, got 0}}
  %0 = relay.conv2d %x, %w {groups = 0 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x6x6x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x1x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: input channels 4 are not divisible by groups 3}}
  %0 = relay.conv2d %x, %w {groups = 3 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x1x4xi8>) -> tensor<1x6x6x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x2x3xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: output channels 3 are not divisible by groups 2}}
  %0 = relay.conv2d %x, %w {groups = 2 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x2x3xi8>) -> tensor<1x6x6x3xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x1x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: weight [3, 3, 1, 4] (HWIO) has 1 input channels per group, expected 2 (input channels 4 / groups 2)}}
  %0 = relay.conv2d %x, %w {groups = 2 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x1x4xi8>) -> tensor<1x6x6x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<9x9x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: window of extent 9 does not fit in the padded input extent 8 (8 + 0 + 0)}}
  %0 = relay.conv2d %x, %w : (tensor<1x8x8x4xi8>, tensor<9x9x4x4xi8>) -> tensor<1x1x1x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x4xf32>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: zero points (1, 0) must be 0 for (f32, f32) operands}}
  %0 = relay.conv2d %x, %w {input_zero_point = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: input_zero_point 128 is out of range for i8 (expected -128..127)}}
  %0 = relay.conv2d %x, %w {input_zero_point = 128 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x6x6x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xf32>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: operand element types (i8, f32) are not supported, expected (f32, f32), (i8, i8) or (i16, i8)}}
  %0 = relay.conv2d %x, %w : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xf32>) -> tensor<1x6x6x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: result type tensor<1x6x6x4xi8> is wrong, expected tensor<1x6x6x4xi32>}}
  %0 = relay.conv2d %x, %w : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x6x6x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x16xi8>, %w: tensor<10x8xi8>) {
  // expected-error@+1 {{'relay.dense' op relay.dense: data [1, 16] and weight [10, 8] disagree on the reduction dimension (expected weight [N, 16])}}
  %0 = relay.dense %x, %w : (tensor<1x16xi8>, tensor<10x8xi8>) -> tensor<1x10xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x1x16xi8>, %w: tensor<10x16xi8>) {
  // expected-error@+1 {{'relay.dense' op relay.dense: data must have rank 2, got shape [1, 1, 16]}}
  %0 = relay.dense %x, %w : (tensor<1x1x16xi8>, tensor<10x16xi8>) -> tensor<1x10xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x16xf32>, %w: tensor<10x16xf32>) {
  // expected-error@+1 {{'relay.dense' op relay.dense: result type tensor<10x1xf32> is wrong, expected tensor<1x10xf32>}}
  %0 = relay.dense %x, %w : (tensor<1x16xf32>, tensor<10x16xf32>) -> tensor<10x1xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{Expected `NHWC`, or `NCHW`.}}
  %0 = relay.max_pool2d %x {pool_size = array<i64: 2, 2>, layout = #relay<data_layout HWC>} : tensor<1x8x8x4xi8> -> tensor<1x7x7x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.max_pool2d' op relay.max_pool2d: pool_size must have 2 values, got 1}}
  %0 = relay.max_pool2d %x {pool_size = array<i64: 2>} : tensor<1x8x8x4xi8> -> tensor<1x7x7x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.avg_pool2d' op relay.avg_pool2d: left padding 2 must be smaller than the pool size 2 (a window would see only padding)}}
  %0 = relay.avg_pool2d %x {pool_size = array<i64: 2, 2>, padding = array<i64: 0, 2, 0, 0>} : tensor<1x8x8x4xi8> -> tensor<1x7x9x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.avg_pool2d' op relay.avg_pool2d: result type tensor<1x7x7x4xi8> is wrong, expected tensor<1x4x4x4xi8>}}
  %0 = relay.avg_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x8x4xi8> -> tensor<1x7x7x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.max_pool2d' op property 'pool_size' expected in operation 'relay.max_pool2d'}}
  %0 = relay.max_pool2d %x : tensor<1x8x8x4xi8> -> tensor<1x7x7x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.global_avg_pool2d' op relay.global_avg_pool2d: result type tensor<1x4xi8> is wrong, expected tensor<1x1x1x4xi8>}}
  %0 = relay.global_avg_pool2d %x : tensor<1x8x8x4xi8> -> tensor<1x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.mean' op relay.mean: axis [1, -3] names an axis twice}}
  %0 = relay.mean %x {axis = array<i64: 1, -3>} : tensor<1x8x8x4xi8> -> tensor<1x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.mean' op relay.mean: axis 4 is out of range for rank 4 (expected -4..3)}}
  %0 = relay.mean %x {axis = array<i64: 4>} : tensor<1x8x8x4xi8> -> tensor<1x8x8xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{'relay.mean' op relay.mean: result type tensor<1x1x1x4xi8> is wrong, expected tensor<1x4xi8>}}
  %0 = relay.mean %x {axis = array<i64: 1, 2>} : tensor<1x8x8x4xi8> -> tensor<1x1x1x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<2x5xi8>) {
  // expected-error@+1 {{'relay.strided_slice' op relay.strided_slice: axis 1: elements 4..6 (stride 2) are outside 0..4}}
  %0 = relay.strided_slice %x {begin = array<i64: 0, 4>, end = array<i64: 2, 7>, strides = array<i64: 1, 2>} : tensor<2x5xi8> -> tensor<2x2xi8>
  func.return
}

// -----

func.func @f(%x: tensor<2x5xi8>) {
  // expected-error@+1 {{'relay.strided_slice' op relay.strided_slice: axis 0: begin 1, end 1, stride 1 select no element (empty results are not supported)}}
  %0 = relay.strided_slice %x {begin = array<i64: 1, 0>, end = array<i64: 1, 5>, strides = array<i64: 1, 1>} : tensor<2x5xi8> -> tensor<0x5xi8>
  func.return
}

// -----

func.func @f(%x: tensor<2x5xi8>) {
  // expected-error@+1 {{'relay.argmax' op relay.argmax: result element type i8 is not supported, expected i32}}
  %0 = relay.argmax %x {axis = 1 : i64} : tensor<2x5xi8> -> tensor<2xi8>
  func.return
}

// -----

func.func @f(%x: tensor<2x5xi8>) {
  // expected-error@+1 {{'relay.broadcast_to' op relay.broadcast_to: [2, 5] does not broadcast to [2, 3]}}
  %0 = relay.broadcast_to %x : tensor<2x5xi8> -> tensor<2x3xi8>
  func.return
}

// -----

func.func @f(%x: tensor<2x5xi8>) {
  // expected-error@+1 {{'relay.strided_slice' op relay.strided_slice: stride of axis 1 is 0}}
  %0 = relay.strided_slice %x {begin = array<i64: 0, 0>, end = array<i64: 2, 5>, strides = array<i64: 1, 0>} : tensor<2x5xi8> -> tensor<2x5xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi32>) {
  // expected-error@+1 {{'relay.sum' op relay.sum: axis [2, -2] names an axis twice}}
  %0 = relay.sum %x {axis = array<i64: 2, -2>} : tensor<1x8x8x4xi32> -> tensor<1x8x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x8x8x4xi32>) {
  // expected-error@+1 {{'relay.sum' op relay.sum: result type tensor<1x8x4xi32> is wrong, expected tensor<1x8x1x4xi32>}}
  %0 = relay.sum %x {axis = array<i64: 2>, keepdims = true} : tensor<1x8x8x4xi32> -> tensor<1x8x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: element type i8 is not supported, expected i32 or i64}}
  %0 = relay.fixed_point_multiply %x {multiplier = array<i32: 1>, shift = array<i32: 0>} : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x4x4x2xi32>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: multiplier has 3 values, expected 1 (per tensor) or 2 (the size of axis 3)}}
  %0 = relay.fixed_point_multiply %x {multiplier = array<i32: 1, 2, 3>, shift = array<i32: 0>, axis = 3 : i64} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x4x4x2xi32>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: shift has 4 values, expected 1 (per tensor) or 2 (the size of axis -1)}}
  %0 = relay.fixed_point_multiply %x {multiplier = array<i32: 1, 2>, shift = array<i32: 0, 1, 2, 3>} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x4x4x2xi32>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: multiplier is empty, expected 1 value or one per channel}}
  %0 = relay.fixed_point_multiply %x {multiplier = array<i32>, shift = array<i32: 0>} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x4x4x2xi32>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: axis 4 is out of range for rank 4 (expected -4..3)}}
  %0 = relay.fixed_point_multiply %x {multiplier = array<i32: 1>, shift = array<i32: 0>, axis = 4 : i64} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi32>) {
  // expected-error@+1 {{'relay.quantize' op relay.quantize: operand element type i32 is not f32}}
  %0 = relay.quantize %x {scale = 0.5 : f64, zero_point = 0 : i64} : tensor<4xi32> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error@+1 {{'relay.quantize' op relay.quantize: result element type f32 is not an integer type (expected i8, i16, i32, i64 or ui8)}}
  %0 = relay.quantize %x {scale = 0.5 : f64, zero_point = 0 : i64} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error@+1 {{'relay.quantize' op relay.quantize: result type tensor<2x2xi8> is wrong, expected tensor<4xi8>}}
  %0 = relay.quantize %x {scale = 0.5 : f64, zero_point = 0 : i64} : tensor<4xf32> -> tensor<2x2xi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error@+1 {{'relay.quantize' op relay.quantize: scale 0.0 divides the input: it must be a number other than 0}}
  %0 = relay.quantize %x {scale = 0.0 : f64, zero_point = 0 : i64} : tensor<4xf32> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error@+1 {{'relay.quantize' op relay.quantize: zero_point -1 is out of range for ui8 (expected 0..255)}}
  %0 = relay.quantize %x {scale = 0.5 : f64, zero_point = -1 : i64} : tensor<4xf32> -> tensor<4xui8>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error@+1 {{'relay.quantize' op property 'zero_point' expected in operation 'relay.quantize'}}
  %0 = relay.quantize %x {scale = 0.5 : f64} : tensor<4xf32> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error@+1 {{'relay.dequantize' op relay.dequantize: operand element type f32 is not an integer type (expected i8, i16, i32, i64 or ui8)}}
  %0 = relay.dequantize %x {scale = 0.5 : f64, zero_point = 0 : i64} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error@+1 {{'relay.quantize' op relay.quantize: scale nan divides the input: it must be a number other than 0}}
  %0 = relay.quantize %x {scale = 0x7FF8000000000000 : f64, zero_point = 0 : i64} : tensor<4xf32> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error@+1 {{'relay.dequantize' op relay.dequantize: result type tensor<4xi8> is wrong, expected tensor<4xf32>}}
  %0 = relay.dequantize %x {scale = 0.5 : f64, zero_point = 0 : i64} : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{'relay.constant' op relay.constant: result type tensor<2xi32> differs from the value's type tensor<2xi8>}}
  %0 = "relay.constant"() <{value = dense<1> : tensor<2xi8>}> : () -> tensor<2xi32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error@+1 {{'relay.tuple' op relay.tuple: result tuple<tensor<4xi32>> does not match the field types (tensor<4xi8>)}}
  %0 = relay.tuple(%x) : (tensor<4xi8>) -> tuple<tensor<4xi32>>
  func.return
}

// -----

func.func @f(%t: tuple<tensor<4xi8>>) {
  // expected-error@+1 {{'relay.tuple_get_item' op relay.tuple_get_item: index 1 is out of range for a tuple of 1 fields (expected 0..0)}}
  %0 = relay.tuple_get_item %t[1] : tuple<tensor<4xi8>> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%t: tuple<tensor<4xi8>>) {
  // expected-error@+1 {{'relay.tuple_get_item' op relay.tuple_get_item: field 0 has type tensor<4xi8>, but the result is tensor<4xi32>}}
  %0 = relay.tuple_get_item %t[0] : tuple<tensor<4xi8>> -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error@+1 {{virtual_device: device id must be >= 0}}
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"cpu", -1>} : tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error@+1 {{unknown virtual_device key 'memory' (expected target or scope)}}
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"cpu", 0, memory = "x">} : tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error@+1 {{'relay.device_copy' op result 'result' at position 0 does not verify:}}
  %0 = "relay.device_copy"(%x) <{src = #device.virtual_device<"cpu", 0>, dst = #device.virtual_device<"npu", 0>}> : (tensor<4xi8>) -> tensor<4xi32>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{relay.constant expects a dense<...> or dense_resource<...> attribute with a tensor type}}
  %0 = relay.constant [1, 2] : tensor<2xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: shift 31 is out of range, expected -31..30}}
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1073741824>, shift = array<i32: 31>} : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<1x2xi32>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: shift -40 is out of range, expected -31..30}}
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: -1, -40>, axis = 1 : i64} : tensor<1x2xi32> -> tensor<1x2xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  %s = relay.constant dense<[1, 2, 32, 0]> : tensor<4xi32>
  // expected-error@+1 {{'relay.right_shift' op relay.right_shift: shift amount 32 is out of range for i32, expected 0..31}}
  %0 = relay.right_shift %a, %s : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  %s = relay.constant dense<-1> : tensor<i8>
  // expected-error@+1 {{'relay.right_shift' op relay.right_shift: shift amount -1 is out of range for i8, expected 0..7}}
  %0 = relay.right_shift %a, %s : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error@+1 {{'relay.clip' op relay.clip: a_min is NaN, expected a number}}
  %0 = relay.clip %a {a_min = 0x7FF8000000000000 : f64, a_max = 1.0 : f64} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error@+1 {{'relay.clip' op relay.clip: a_max is NaN, expected a number}}
  %0 = relay.clip %a {a_min = 0.0 : f64, a_max = 0x7FF8000000000000 : f64} : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error@+1 {{'relay.clip' op relay.clip: a_min -inf is not finite; bounds of an integer clip must be finite numbers}}
  %0 = relay.clip %a {a_min = 0xFFF0000000000000 : f64, a_max = 1.0 : f64} : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4x0xf32>) {
  // expected-error@+1 {{'relay.relu' op relay.relu: operand: tensor<4x0xf32> has a zero dimension; every dimension must be >= 1 (C99 has no zero-sized arrays)}}
  %0 = relay.relu %a : tensor<4x0xf32> -> tensor<4x0xf32>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{'relay.constant' op relay.constant: tensor<0xi8> has a zero dimension; every dimension must be >= 1 (C99 has no zero-sized arrays)}}
  %0 = relay.constant dense<> : tensor<0xi8>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{tensor<100000000000xi8> holds 100000000000 bytes; the generated C indexes buffers with ptrdiff_t, so at most 2147483647 bytes (2^31-1) are accepted}}
  %0 = relay.constant dense<0> : tensor<100000000000xi8>
  func.return
}

// -----

// The product of the dimensions overflows 64 bits.
// expected-error@+1 {{tensor<4294967296x4294967296x4294967296xf32> holds 316912650057057350374175801344 bytes; the generated C indexes buffers with ptrdiff_t, so at most 2147483647 bytes (2^31-1) are accepted}}
func.func @f(%a: tensor<4294967296x4294967296x4294967296xf32>) {
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{float literal 1.0e999 is out of range for f32 (largest finite value 3.40282347e+38); write infinity as the hexadecimal bit pattern 0x7F800000}}
  %0 = relay.constant dense<[1.0e999, 0.0]> : tensor<2xf32>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{float literal 1.0e39 is out of range for f32 (largest finite value 3.40282347e+38); write infinity as the hexadecimal bit pattern 0x7F800000}}
  %0 = arith.constant 1.0e39 : f32
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{float literal -1.0e999 is out of range for f64 (largest finite value 1.79769313e+308); write -infinity as the hexadecimal bit pattern 0xFFF0000000000000}}
  %0 = arith.constant -1.0e999 : f64
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{hexadecimal float literal should not have a leading minus (it is the bit pattern: set the sign bit)}}
  %0 = relay.constant dense<[1.0, -0x7F800000]> : tensor<2xf32>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{hexadecimal float constant out of range for type f32 (a bit pattern of at most 32 bits)}}
  %0 = relay.constant dense<[0x1FF800000, 1.0]> : tensor<2xf32>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{hexadecimal float constant out of range for type f16 (a bit pattern of at most 16 bits)}}
  %0 = arith.constant 0x17C00 : f16
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{hexadecimal float literal 0x7F800001 (a NaN) cannot be held exactly in a scalar f32 attribute (it would read as 0x7FC00001); a dense<...> constant holds any bit pattern}}
  %0 = arith.constant 0x7F800001 : f32
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{Integer value 300 is out of range for type i8 which supports values in the range [-128, 256)}}
  %0 = relay.constant dense<[1, 300]> : tensor<2xi8>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{Integer value 300 is out of range for type i8 which supports values in the range [-128, 256)}}
  %0 = arith.constant 300 : i8
  func.return
}

// -----

// expected-error@+1 {{Integer value -129 is out of range for type i8 which supports values in the range [-128, 256)}}
func.func @f() attributes {x = [1 , -129 : i8]} {
  func.return
}

// -----

func.func @f() -> tensor<4xi8> {
  %0 = relay.constant dense_resource<blob> : tensor<4xi8>
  func.return %0 : tensor<4xi8>
}
// expected-error@+1 {{resource blob 'blob' is not valid; expected "0x" followed by hex digit pairs: a 4-byte alignment, then the data}}
{-# dialect_resources: { builtin: { blob: "0xZZ" } } #-}

// -----

func.func @main() {
  func.return
}
// expected-error@+1 {{symbol "@main" is defined twice; every symbol of a 'builtin.module' must have a unique name}}
func.func @main() {
  func.return
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.call' op relay.call to @missing, which is not a function of the module}}
  %0 = relay.call @missing(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

"memref.global"() <{sym_name = "g", sym_visibility = "private", type = memref<4xf32>, initial_value = dense<1.0> : tensor<4xf32>, constant}> : () -> ()
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.call' op relay.call to @g, which is a 'memref.global', not a func.func}}
  %0 = relay.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fused_neg(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  func.return %a : tensor<4xf32>
}
func.func @main(%x: tensor<4xi8>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.call' op relay.call passes (tensor<4xi8>), but @fused_neg takes (tensor<4xf32>)}}
  %0 = relay.call @fused_neg(%x) : (tensor<4xi8>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fused_neg(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  func.return %a : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'relay.call' op relay.call returns tensor<2x2xf32>, but @fused_neg returns (tensor<4xf32>)}}
  %0 = relay.call @fused_neg(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @helper(%a: memref<4xf32>, %b: memref<4xf32>) {
  func.return
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.call' op relay.call to @helper, which has a body but is neither a relay primitive function ('relay.primitive') nor a tir prim func ('tir.prim_func')}}
  %0 = relay.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @add(memref<4xf32>, memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.call' op relay.call @add passes 1 input and 1 output buffer(s) (2 in all), but @add takes 3 argument(s) (memref<4xf32>, memref<4xf32>, memref<4xf32>); expected (memref<4xf32>, memref<4xf32>)}}
  %0 = relay.call @add(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>, memref<4xi8>) attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.call' op relay.call @neg: argument 1 (output) of @neg is memref<4xi8>, but the call passes memref<4xf32>}}
  %0 = relay.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>) -> memref<4xf32> attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.call' op relay.call to @neg, which returns 1 value(s); an operator function returns nothing and writes its outputs into its trailing memref arguments}}
  %0 = relay.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<2x5xi8>, %i: tensor<3xi8>) {
  // expected-error@+1 {{'relay.gather' op relay.gather: indices are i8, expected i32}}
  %0 = relay.gather %x, %i : (tensor<2x5xi8>, tensor<3xi8>) -> tensor<3x5xi8>
  func.return
}

// -----

func.func @f(%x: tensor<2x5xi8>, %i: tensor<3x1xi32>) {
  // expected-error@+1 {{'relay.gather' op relay.gather: the first 1 dimensions of the data [2, 5] and the indices [3, 1] differ}}
  %0 = relay.gather %x, %i {axis = 1 : i64, batch_dims = 1 : i64} : (tensor<2x5xi8>, tensor<3x1xi32>) -> tensor<2x1xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x2x2x3xf32>) {
  // expected-error@+1 {{'relay.resize_bilinear' op relay.resize_bilinear: align_corners and half_pixel_centers exclude each other}}
  %0 = relay.resize_bilinear %x {align_corners = true, half_pixel_centers = true} : tensor<1x2x2x3xf32> -> tensor<1x4x4x3xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x2x2x3xi32>) {
  // expected-error@+1 {{'relay.resize_bilinear' op relay.resize_bilinear: element type i32 is not supported, expected f32, i8 or i16}}
  %0 = relay.resize_bilinear %x : tensor<1x2x2x3xi32> -> tensor<1x4x4x3xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x2xf32>, %w: tensor<4x2xf32>, %r: tensor<4x4xf32>, %b: tensor<4xf32>, %h: tensor<1x4xf32>, %c: tensor<1x4xf32>) {
  // expected-error@+1 {{'relay.lstm' op relay.lstm: recurrent_to_input_weights has shape [4, 2], expected [4, 4]}}
  %0 = relay.lstm(%x, %w, %w, %w, %w, %w, %r, %r, %r, %b, %b, %b, %b, %h, %c) : (tensor<1x3x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x3x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x2xi8>, %w: tensor<4x2xi8>, %r: tensor<4x4xi8>, %b: tensor<4xi32>, %h: tensor<1x4xi8>, %c: tensor<1x4xi16>) {
  // expected-error@+1 {{'relay.lstm' op relay.lstm: data has element type i8, expected f32 for a float LSTM}}
  %0 = relay.lstm(%x, %w, %w, %w, %w, %r, %r, %r, %r, %b, %b, %b, %b, %h, %c) : (tensor<1x3x2xi8>, tensor<4x2xi8>, tensor<4x2xi8>, tensor<4x2xi8>, tensor<4x2xi8>, tensor<4x4xi8>, tensor<4x4xi8>, tensor<4x4xi8>, tensor<4x4xi8>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<1x4xi8>, tensor<1x4xi16>) -> tensor<1x3x4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x2xf32>, %w: tensor<4x2xf32>, %r: tensor<4x4xf32>, %b: tensor<4xf32>, %h: tensor<1x4xf32>, %c: tensor<1x4xf32>) {
  // expected-error@+1 {{'relay.lstm' op relay.lstm: cell_activation 'relu' is not supported, expected one of tanh, sigmoid}}
  %0 = relay.lstm(%x, %w, %w, %w, %w, %r, %r, %r, %r, %b, %b, %b, %b, %h, %c) {cell_activation = "relu"} : (tensor<1x3x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x3x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi64>) {
  // expected-error@+1 {{'relay.fixed_point_multiply' op relay.fixed_point_multiply: shift 8 is out of range, expected -31..7}}
  %0 = relay.fixed_point_multiply %x {multiplier = array<i32: 1073741824>, shift = array<i32: 8>} : tensor<4xi64> -> tensor<4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x4x4x2xi16>, %w: tensor<3x3x2x4xi8>) {
  // expected-error@+1 {{'relay.conv2d' op relay.conv2d: zero points (3, 0) must be 0 for (i16, i8) operands}}
  %0 = relay.conv2d %x, %w {input_zero_point = 3 : i64} : (tensor<1x4x4x2xi16>, tensor<3x3x2x4xi8>) -> tensor<1x2x2x4xi64>
  func.return
}

// -----

func.func @f(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error@+1 {{'relay.conv2d_transpose' op relay.conv2d_transpose: weight [3, 3, 3, 4] (OHWI) has 4 input channels, expected 2}}
  %0 = relay.conv2d_transpose %x, %w : (tensor<1x4x4x2xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x1x1x2xf32>, %w: tensor<3x1x1x2xf32>) {
  // expected-error@+1 {{'relay.conv2d_transpose' op relay.conv2d_transpose: padding [1, 0, 0, 0] leaves no output along spatial axis 0}}
  %0 = relay.conv2d_transpose %x, %w {padding = array<i64: 1, 0, 0, 0>} : (tensor<1x1x1x2xf32>, tensor<3x1x1x2xf32>) -> tensor<1x1x1x3xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi16>, %t: tensor<256xi16>) {
  // expected-error@+1 {{'relay.table_lookup' op relay.table_lookup: data element type i16 is not supported, expected i8 or ui8}}
  %0 = relay.table_lookup %a, %t : (tensor<4xi16>, tensor<256xi16>) -> tensor<4xi16>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>, %t: tensor<128xi8>) {
  // expected-error@+1 {{'relay.table_lookup' op relay.table_lookup: table shape (128,) is wrong, expected (256,): one value per 8-bit input}}
  %0 = relay.table_lookup %a, %t : (tensor<4xi8>, tensor<128xi8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error@+1 {{'relay.quantized_sigmoid' op relay.quantized_sigmoid: element type i8 is not supported, expected i16}}
  %0 = relay.quantized_sigmoid %a {input_multiplier = 0 : i64, input_left_shift = 0 : i64} : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4xi16>) {
  // expected-error@+1 {{'relay.quantized_tanh' op relay.quantized_tanh: input_multiplier 40000 is out of range, expected 0..32767}}
  %0 = relay.quantized_tanh %a {input_multiplier = 40000 : i64, input_left_shift = 3 : i64} : tensor<4xi16> -> tensor<4xi16>
  func.return
}

// -----

func.func @f(%a: tensor<4x3xi16>) {
  // expected-error@+1 {{'relay.quantized_softmax_i16' op relay.quantized_softmax_i16: axis 0 is not the last axis (1)}}
  %0 = relay.quantized_softmax_i16 %a {input_multiplier = 1 : i64, input_left_shift = 0 : i64, axis = 0 : i64} : tensor<4x3xi16> -> tensor<4x3xi16>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error@+1 {{'relay.rsqrt' op relay.rsqrt: element type i8 is not supported, expected f32}}
  %0 = relay.rsqrt %a : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error@+1 {{'relay.quantized_l2_normalize' op relay.quantized_l2_normalize: input_zero_point 200 is out of range, expected -128..127}}
  %0 = relay.quantized_l2_normalize %a {input_zero_point = 200 : i64} : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%x: tensor<2x3x4xf32>) {
  // expected-error@+1 {{'relay.dynamic_quantize' op relay.dynamic_quantize: operand must have rank 2 (rows, values), got [2, 3, 4]}}
  %0 = relay.dynamic_quantize %x : tensor<2x3x4xf32> -> tensor<2x3x4xi8>
  func.return
}

// -----

func.func @f(%h: tensor<2x4xi8>) {
  // expected-error@+1 {{'relay.dynamic_quantize_scale' op relay.dynamic_quantize_scale: operand element type i8 is not f32}}
  %1 = relay.dynamic_quantize_scale %h : tensor<2x4xi8> -> tensor<2x1xf32>
  func.return
}

// -----

func.func @f(%x: tensor<2x4xf32>) {
  // expected-error@+1 {{'relay.dynamic_quantize_scale' op relay.dynamic_quantize_scale: result type tensor<2x4xf32> is wrong, expected tensor<2x1xf32>}}
  %0 = relay.dynamic_quantize_scale %x : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error@+1 {{'relay.quantized_divide' op relay.quantized_divide: element type i8 is not i32}}
  %0 = relay.quantized_divide %a, %a {output_multiplier = 1 : i64, output_shift = 0 : i64} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @f(%b: tensor<4xi32>) {
  // expected-error@+1 {{'relay.quantized_divide' op relay.quantized_divide: output_shift 40 is out of range, expected -31..31}}
  %1 = relay.quantized_divide %b, %b {output_multiplier = 1 : i64, output_shift = 40 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}
