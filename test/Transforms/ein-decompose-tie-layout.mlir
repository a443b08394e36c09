// RUN: ein-opt %s -split-input-file -ein-decompose="tie-layout=true remarks=true" -verify-diagnostics | FileCheck %s

// y = x^T must leave in the layout x arrived in. Whatever the cut, y's
// blocks mirror x's; a 2 x 2 cut keeps the diagonal quarters in place and
// swaps the other two: 2 x 32 x 32 x 4 B = 8 KiB.
// CHECK-LABEL: func.func @transpose
// CHECK: spec = #ein.spec<[2, 2]>
module attributes {ein.target = #ein.target<devices = 4>} {
  // expected-remark @+2 {{0.0 B moved (not counting the moves that return tied results}}
  // expected-remark @+1 {{plan total 8.0 KiB over 1 ops}}
  func.func @transpose(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
    // expected-remark @+1 {{spec #ein.spec<[2, 2]>: join 0.0 B, aggregation 0.0 B, repartition 8.0 KiB}}
    %y = ein.join_agg none ins(%x[d0, d1] : tensor<64x64xf32>) out[d1, d0] : tensor<64x64xf32> {
    ^bb0(%v: f32):
      ein.yield %v : f32
    }
    return %y : tensor<64x64xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @no_matching_argument(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
    %y = ein.join_agg none ins(%x[d0, d1] : tensor<4x8xf32>) out[d1, d0] : tensor<8x4xf32> {
    ^bb0(%v: f32):
      ein.yield %v : f32
    }
    // expected-error @+1 {{result 0 ('tensor<8x4xf32>') has no activation argument of its type to tie its layout to}}
    return %y : tensor<8x4xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @returns_an_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{result 0 is an argument itself; it already leaves in its own layout}}
    return %x : tensor<4xf32>
  }
}
