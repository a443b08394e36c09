// Every op survives printing in the generic form and parsing back, and the
// custom form printed from it matches the original's.
// RUN: ein-opt %s -split-input-file -mlir-print-op-generic | ein-opt -split-input-file | FileCheck %s
// RUN: ein-opt %s -split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// GENERIC: "ein.join_agg"(%{{.*}}, %{{.*}}) <{agg = 1 : i32, input_indices = [array<i64: 0, 1>, array<i64: 1, 2>], output_indices = array<i64: 0, 2>, spec = #ein.spec<[2, 2, 2]>}>
// CHECK-LABEL: func.func @all_logical
// CHECK: ein.join_agg add ins(%{{.*}}[d0, d1], %{{.*}}[d1, d2] : tensor<8x4xf32>, tensor<4x8xf32>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : tensor<8x8xf32>
// CHECK: ein.index 1 : index
// CHECK: ein.attention {{.*}} {causal, group = 2 : i64}
// CHECK: ein.softmax %{{.*}} dim 1
// CHECK: ein.rms_norm %{{.*}}, %{{.*}} eps 1.000000e-05
// CHECK: ein.reshape %{{.*}} {{\[}}[0, 1]]
// CHECK: ein.slice %{{.*}} [0, 0] [8, 4]
// CHECK: ein.concat dim 1
module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @all_logical(%a: tensor<8x4xf32>, %b: tensor<4x8xf32> {ein.weight}, %q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>, %w: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<1x4x8x8xf32>, tensor<64xf32>, tensor<8x8xf32>) {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x4xf32>, tensor<4x8xf32>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : tensor<8x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %j = ein.index 1 : index
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    %o = ein.attention %q, %k, %k {causal, group = 2 : i64} : tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32> -> tensor<1x4x8x8xf32>
    %s = ein.softmax %c dim 1 : tensor<8x8xf32>
    %n = ein.rms_norm %s, %w eps 1.0e-5 : tensor<8x8xf32>, tensor<8xf32>
    %f = ein.reshape %n [[0, 1]] : tensor<8x8xf32> -> tensor<64xf32>
    %lo = ein.slice %n [0, 0] [8, 4] : tensor<8x8xf32> -> tensor<8x4xf32>
    %cat = ein.concat dim 1 %lo, %lo : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
    return %c, %o, %f, %cat : tensor<8x8xf32>, tensor<1x4x8x8xf32>, tensor<64xf32>, tensor<8x8xf32>
  }
}

// -----

// GENERIC: "ein.transfer"(%{{.*}}) <{from = 0 : i64, offsets = [array<i64: 0>], operandSegmentSizes = array<i32: 1, 0>, sizes = [array<i64: 4>], to = 1 : i64}>
// GENERIC: "ein.transfer"(%{{.*}}, %{{.*}}) <{from = 1 : i64, offsets = [array<i64: 0>, array<i64: 2>], operandSegmentSizes = array<i32: 2, 0>, sizes = [array<i64: 2>, array<i64: 2>], to = 2 : i64}>
// CHECK-LABEL: func.func @all_device
// CHECK: ein.partition
// CHECK: ein.repartition
// CHECK: ein.extract_block
// CHECK: ein.transfer %{{.*}} [0] [4] from 0 to 1
// CHECK: ein.transfer %{{.*}} [0] [2], %{{.*}} [2] [2] from 1 to 2 : tensor<4xf32>, tensor<4xf32> -> tensor<2xf32>, tensor<2xf32>
// CHECK: ein.multicast %{{.*}} from 1 to [0, 2] after(%{{.*}})
// CHECK: ein.aggregate min
// CHECK: ein.from_blocks
// CHECK: ein.assemble
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @all_device(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = ein.partition %x : tensor<4xf32> -> !ein.rel<4xf32, parts = [1]>
    %p = ein.repartition %r : !ein.rel<4xf32, parts = [1]> -> !ein.rel<4xf32, parts = [1], devices = [0]>
    %b = ein.extract_block %p [0] replica 0 : !ein.rel<4xf32, parts = [1], devices = [0]> -> tensor<4xf32>
    %c, %t = ein.transfer %b [0] [4] from 0 to 1 : tensor<4xf32> -> tensor<4xf32>
    %c0, %c1, %tc = ein.transfer %c [0] [2], %c [2] [2] from 1 to 2 : tensor<4xf32>, tensor<4xf32> -> tensor<2xf32>, tensor<2xf32>
    %d0, %d2, %t2 = ein.multicast %c from 1 to [0, 2] after(%t) : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
    %m, %t3 = ein.aggregate min %b, %d0 on 0 after(%t2) : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %q = ein.from_blocks %m : tensor<4xf32> -> !ein.rel<4xf32, parts = [1], devices = [0]>
    %out = ein.assemble %q : !ein.rel<4xf32, parts = [1], devices = [0]> -> tensor<4xf32>
    return %out : tensor<4xf32>
  }
}
