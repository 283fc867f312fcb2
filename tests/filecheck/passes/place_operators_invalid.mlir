// RUN: not usmp-opt %s -p 'place-operators{offload="CONV_2D"}' 2>&1 | FileCheck %s --check-prefix=PAIR
// RUN: not usmp-opt %s -p 'place-operators{offload="CONV_2D=c"}' 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not usmp-opt %s -p 'place-operators{offload="CONV_2D=a,CONV_2D=b"}' 2>&1 | FileCheck %s --check-prefix=TWICE

// PAIR: place-operators: offload entry 'CONV_2D' is not OP_TYPE=TARGET; expected OP_TYPE=TARGET pairs, comma separated
// HOST: place-operators: offload entry 'CONV_2D=c': 'c' is not an offload target
// TWICE: place-operators: CONV_2D is placed on both 'a' and 'b'

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
