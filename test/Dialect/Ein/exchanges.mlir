// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// A row-split activation is summed against a column-split weight, the
// partials are aggregated and re-cut, and the result leaves whole.
// CHECK-LABEL: func.func @logical_exchanges
// CHECK: %[[P:.*]] = ein.partition %{{.*}} : tensor<64x64xf32> -> !ein.rel<64x64xf32, parts = [1, 2]>
// CHECK: %[[R:.*]] = ein.repartition %{{.*}} : !ein.rel<64x64xf32, parts = [1, 1], replicas = 2, partial = add> -> !ein.rel<64x64xbf16, parts = [2, 1]>
// CHECK: ein.assemble %[[R]] : !ein.rel<64x64xbf16, parts = [2, 1]> -> tensor<64x64xbf16>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @logical_exchanges(%x: tensor<64x64xf32>, %w: !ein.rel<64x64xf32, parts = [2, 1]>) -> tensor<64x64xbf16> {
    %p = ein.partition %x : tensor<64x64xf32> -> !ein.rel<64x64xf32, parts = [1, 2]>
    %c = ein.join_agg add ins(%p[d0, d1], %w[d1, d2] : !ein.rel<64x64xf32, parts = [1, 2]>, !ein.rel<64x64xf32, parts = [2, 1]>) out[d0, d2] attributes {spec = #ein.spec<[1, 2, 1]>} : !ein.rel<64x64xf32, parts = [1, 1], replicas = 2, partial = add> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    %r = ein.repartition %c : !ein.rel<64x64xf32, parts = [1, 1], replicas = 2, partial = add> -> !ein.rel<64x64xbf16, parts = [2, 1]>
    %t = ein.assemble %r : !ein.rel<64x64xbf16, parts = [2, 1]> -> tensor<64x64xbf16>
    return %t : tensor<64x64xbf16>
  }
}

// -----

// A partial relation may be re-cut and stay partial with the same kind.
// CHECK-LABEL: func.func @partial_stays_partial
// CHECK: ein.repartition %{{.*}} : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = max> -> !ein.rel<8x8xf32, parts = [1, 2], replicas = 2, partial = max, devices = [0, 1, 1, 0]>
func.func @partial_stays_partial(%x: !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = max>) -> !ein.rel<8x8xf32, parts = [1, 2], replicas = 2, partial = max, devices = [0, 1, 1, 0]> {
  %r = ein.repartition %x : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = max> -> !ein.rel<8x8xf32, parts = [1, 2], replicas = 2, partial = max, devices = [0, 1, 1, 0]>
  return %r : !ein.rel<8x8xf32, parts = [1, 2], replicas = 2, partial = max, devices = [0, 1, 1, 0]>
}
