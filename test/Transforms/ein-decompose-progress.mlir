// RUN: ein-opt %s --ein-decompose="progress-seconds=0" -o /dev/null 2>&1 | FileCheck %s
// RUN: ein-opt %s --ein-decompose -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET

// A search that runs longer than progress-seconds says how far it has come
// on standard error: nodes placed (the op and its source line), the states
// it keeps, the cheapest partial cost. At 0 every step reports; at the
// default (3 s) a small program's search says nothing.
// CHECK: ein-decompose: planning @mlp: 1 of 5 nodes placed, {{[0-9]+}} states, cheapest 0.0 B so far, {{[0-9.]+}} s
// CHECK: ein-decompose: planning @mlp: 3 of 5 nodes placed (ein.join_agg at ein-decompose-progress.mlir:[[@LINE+5]]), {{[0-9]+}} states, cheapest {{.*}} so far
// CHECK: ein-decompose: planning @mlp: 5 of 5 nodes placed (ein.join_agg at ein-decompose-progress.mlir:[[@LINE+9]]), 1 states, cheapest {{.*}} so far
// QUIET-NOT: ein-decompose: planning
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @mlp(%x: tensor<64x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x32xf32>) -> tensor<64x32xf32> {
    %h = ein.join_agg add ins(%x[d0, d2], %w1[d2, d1] : tensor<64x32xf32>, tensor<32x64xf32>) out[d0, d1] : tensor<64x64xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    %y = ein.join_agg add ins(%h[d0, d2], %w2[d2, d1] : tensor<64x64xf32>, tensor<64x32xf32>) out[d0, d1] : tensor<64x32xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    return %y : tensor<64x32xf32>
  }
}
