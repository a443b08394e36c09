// RUN: ein-opt %s -split-input-file -ein-insert-exchanges | FileCheck %s

// The 3-D matmul: the arguments enter cut as the spec needs them, with one
// replica per join block that reads a block; the result holds two partial
// sums and is aggregated before it leaves.
// CHECK-LABEL: func.func @matmul_3d
// CHECK-SAME: (%[[A:.*]]: tensor<64x32xf32>, %[[B:.*]]: tensor<32x16xf32>) -> tensor<64x16xf32>
// CHECK: %[[PA:.*]] = ein.partition %[[A]] : tensor<64x32xf32> -> !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>
// CHECK: %[[PB:.*]] = ein.partition %[[B]] : tensor<32x16xf32> -> !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>
// CHECK: %[[C:.*]] = ein.join_agg add ins(%[[PA]][d0, d1], %[[PB]][d1, d2] : {{.*}}) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add>
// CHECK: %[[S:.*]] = ein.repartition %[[C]] : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> -> !ein.rel<64x16xf32, parts = [2, 2]>
// CHECK: %[[T:.*]] = ein.assemble %[[S]] : !ein.rel<64x16xf32, parts = [2, 2]> -> tensor<64x16xf32>
// CHECK: return %[[T]]
module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @matmul_3d(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xf32>, tensor<32x16xf32>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : tensor<64x16xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x16xf32>
  }
}

// -----

// Where producer and consumer agree nothing is inserted; where they differ a
// repartition moves the value (and aggregates bf16 partials kept in f32).
// A value read twice in one layout is moved once.
// CHECK-LABEL: func.func @chain
// CHECK: %[[H:.*]] = ein.join_agg add {{.*}} : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>
// CHECK: %[[R:.*]] = ein.repartition %[[H]] : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> -> !ein.rel<8x8xbf16, parts = [2, 1]>
// CHECK-NOT: ein.repartition
// CHECK: ein.join_agg none ins(%[[R]][d0, d1], %[[R]][d0, d1] : {{.*}}) out[d0, d1] attributes {spec = #ein.spec<[2, 1]>} : !ein.rel<8x8xbf16, parts = [2, 1]>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @chain(%a: tensor<8x8xbf16>, %b: tensor<8x8xbf16> {ein.weight}) -> tensor<8x8xbf16> {
    %h = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x8xbf16>, tensor<8x8xbf16>) out[d0, d2] attributes {spec = #ein.spec<[1, 2, 1]>} : tensor<8x8xbf16> {
    ^bb0(%x: bf16, %y: bf16):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.mulf %xf, %yf : f32
      ein.yield %m : f32
    }
    %s = ein.join_agg none ins(%h[d0, d1], %h[d0, d1] : tensor<8x8xbf16>, tensor<8x8xbf16>) out[d0, d1] attributes {spec = #ein.spec<[2, 1]>} : tensor<8x8xbf16> {
    ^bb0(%x: bf16, %y: bf16):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.addf %xf, %yf : f32
      ein.yield %m : f32
    }
    return %s : tensor<8x8xbf16>
  }
}

// -----

// Composites and touch ops: attention by KV head, a slice that reads its
// input as it was made.
// CHECK-LABEL: func.func @composites
// CHECK: ein.attention {{.*}} : !ein.rel<1x4x8x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x8x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x8x8xf32, parts = [1, 2, 1, 1]> -> !ein.rel<1x4x8x8xf32, parts = [1, 2, 1, 1]>
// CHECK: ein.slice %{{.*}} [0, 0, 0, 0] [1, 4, 8, 4] {spec = #ein.spec<[1, 1, 2, 1]>} : !ein.rel<1x4x8x8xf32, parts = [1, 2, 1, 1]> -> !ein.rel<1x4x8x4xf32, parts = [1, 1, 2, 1]>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @composites(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>) -> tensor<1x4x8x4xf32> {
    %o = ein.attention %q, %k, %k {causal, group = 2 : i64, spec = #ein.spec<[1, 2, 1, 1, 1]>} : tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32> -> tensor<1x4x8x8xf32>
    %s = ein.slice %o [0, 0, 0, 0] [1, 4, 8, 4] {spec = #ein.spec<[1, 1, 2, 1]>} : tensor<1x4x8x8xf32> -> tensor<1x4x8x4xf32>
    return %s : tensor<1x4x8x4xf32>
  }
}

// -----

// One value read twice by one op in two layouts (the Gram matrix x^T x
// cut along its rows): each operand gets its own relation.
// CHECK-LABEL: func.func @read_twice
// CHECK-SAME: (%[[X:.*]]: tensor<10x24xf32>)
// CHECK: %[[COLS:.*]] = ein.partition %[[X]] : tensor<10x24xf32> -> !ein.rel<10x24xf32, parts = [1, 2]>
// CHECK: %[[ALL:.*]] = ein.partition %[[X]] : tensor<10x24xf32> -> !ein.rel<10x24xf32, parts = [1, 1], replicas = 2>
// CHECK: ein.join_agg add ins(%[[COLS]][d2, d0], %[[ALL]][d2, d1] : !ein.rel<10x24xf32, parts = [1, 2]>, !ein.rel<10x24xf32, parts = [1, 1], replicas = 2>)
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @read_twice(%x: tensor<10x24xf32>) -> tensor<24x24xf32> {
    %g = ein.join_agg add ins(%x[d2, d0], %x[d2, d1] : tensor<10x24xf32>, tensor<10x24xf32>) out[d0, d1] attributes {spec = #ein.spec<[2, 1, 1]>} : tensor<24x24xf32> {
    ^bb0(%a: f32, %b: f32):
      %p = arith.mulf %a, %b : f32
      ein.yield %p : f32
    }
    return %g : tensor<24x24xf32>
  }
}
