// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// The 3-D matmul on 8 GPUs: every input block is read by 2 join blocks and
// every output block is the sum of 2 partials.
// CHECK-LABEL: func.func @matmul_3d
// CHECK: ein.join_agg add ins(%{{.*}}[d0, d1], %{{.*}}[d1, d2] : !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add>
module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @matmul_3d(%a: !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, %b: !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) -> !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add>
  }
}

// -----

// Row split (4, 1, 1) on 4 GPUs with an uneven cut: B is replicated 4 times,
// nothing is aggregated.
// CHECK-LABEL: func.func @row_split
// CHECK-SAME: !ein.rel<10x4xf32, parts = [4, 1]>
// CHECK-SAME: !ein.rel<4x6xf32, parts = [1, 1], replicas = 4>
// CHECK: attributes {spec = #ein.spec<[4, 1, 1]>} : !ein.rel<10x6xf32, parts = [4, 1]>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @row_split(%a: !ein.rel<10x4xf32, parts = [4, 1]>, %b: !ein.rel<4x6xf32, parts = [1, 1], replicas = 4>) -> !ein.rel<10x6xf32, parts = [4, 1]> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<10x4xf32, parts = [4, 1]>, !ein.rel<4x6xf32, parts = [1, 1], replicas = 4>) out[d0, d2] attributes {spec = #ein.spec<[4, 1, 1]>} : !ein.rel<10x6xf32, parts = [4, 1]> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<10x6xf32, parts = [4, 1]>
  }
}

// -----

// bf16 partials wait for their aggregation in the f32 accumulator type.
// CHECK-LABEL: func.func @bf16_partials
// CHECK: : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @bf16_partials(%a: !ein.rel<8x8xbf16, parts = [1, 2]>, %b: !ein.rel<8x8xbf16, parts = [2, 1]>) -> !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<8x8xbf16, parts = [1, 2]>, !ein.rel<8x8xbf16, parts = [2, 1]>) out[d0, d2] attributes {spec = #ein.spec<[1, 2, 1]>} : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> {
    ^bb0(%x: bf16, %y: bf16):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.mulf %xf, %yf : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>
  }
}
