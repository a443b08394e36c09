// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// CHECK-LABEL: func.func @reshapes
// CHECK: %[[C:.*]] = ein.reshape %{{.*}} {{\[}}[0, 1], [2]] : tensor<4x8x16xf32> -> tensor<32x16xf32>
// CHECK: ein.reshape %[[C]] {{\[}}[0], [1, 2]] : tensor<32x16xf32> -> tensor<32x4x4xf32>
func.func @reshapes(%x: tensor<4x8x16xf32>) -> tensor<32x4x4xf32> {
  %c = ein.reshape %x [[0, 1], [2]] : tensor<4x8x16xf32> -> tensor<32x16xf32>
  %e = ein.reshape %c [[0], [1, 2]] : tensor<32x16xf32> -> tensor<32x4x4xf32>
  return %e : tensor<32x4x4xf32>
}

// -----

// Collapsing heads into the hidden dimension keeps a head-wise cut: only the
// outermost dimension of the group is cut.
// CHECK-LABEL: func.func @relation_reshape
// CHECK: ein.reshape %{{.*}} {{\[}}[0], [1, 2]] {spec = #ein.spec<[1, 2, 1]>} : !ein.rel<16x4x8xf32, parts = [1, 2, 1], devices = [0, 1]> -> !ein.rel<16x32xf32, parts = [1, 2], devices = [0, 1]>
func.func @relation_reshape(%x: !ein.rel<16x4x8xf32, parts = [1, 2, 1], devices = [0, 1]>) -> !ein.rel<16x32xf32, parts = [1, 2], devices = [0, 1]> {
  %r = ein.reshape %x [[0], [1, 2]] {spec = #ein.spec<[1, 2, 1]>} : !ein.rel<16x4x8xf32, parts = [1, 2, 1], devices = [0, 1]> -> !ein.rel<16x32xf32, parts = [1, 2], devices = [0, 1]>
  return %r : !ein.rel<16x32xf32, parts = [1, 2], devices = [0, 1]>
}

// -----

// CHECK-LABEL: func.func @rotate_half
// CHECK: %[[LO:.*]] = ein.slice %[[X:.*]] [0, 0] [8, 4] : tensor<8x8xf32> -> tensor<8x4xf32>
// CHECK: %[[HI:.*]] = ein.slice %[[X]] [0, 4] [8, 4] : tensor<8x8xf32> -> tensor<8x4xf32>
// CHECK: ein.concat dim 1 %[[HI]], %[[LO]] : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
func.func @rotate_half(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %lo = ein.slice %x [0, 0] [8, 4] : tensor<8x8xf32> -> tensor<8x4xf32>
  %hi = ein.slice %x [0, 4] [8, 4] : tensor<8x8xf32> -> tensor<8x4xf32>
  %r = ein.concat dim 1 %hi, %lo : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Specs on layout ops.
// CHECK-LABEL: func.func @layout_specs
// CHECK: ein.reshape %{{.*}} {{\[}}[0, 1], [2]] {spec = #ein.spec<[2, 1, 1]>}
// CHECK: ein.slice %{{.*}} [0, 0] [32, 8] {spec = #ein.spec<[1, 2]>}
// CHECK: ein.concat dim 1 %{{.*}}, %{{.*}} {spec = #ein.spec<[2, 1]>}
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @layout_specs(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
    %c = ein.reshape %x [[0, 1], [2]] {spec = #ein.spec<[2, 1, 1]>} : tensor<4x8x16xf32> -> tensor<32x16xf32>
    %s = ein.slice %c [0, 0] [32, 8] {spec = #ein.spec<[1, 2]>} : tensor<32x16xf32> -> tensor<32x8xf32>
    %r = ein.concat dim 1 %s, %s {spec = #ein.spec<[2, 1]>} : tensor<32x8xf32>, tensor<32x8xf32> -> tensor<32x16xf32>
    return %r : tensor<32x16xf32>
  }
}

// -----

// A leading batch of 1 collapses with the tokens cut: the inner dimension
// may be cut when every outer one is cut fully (here, a size-1 batch).
// CHECK-LABEL: func.func @inner_cut_under_unit_batch
// CHECK: ein.reshape %{{.*}} {{\[}}[0, 1]] {spec = #ein.spec<[1, 2]>} : !ein.rel<1x8xf32, parts = [1, 2]> -> !ein.rel<8xf32, parts = [2]>
func.func @inner_cut_under_unit_batch(%x: !ein.rel<1x8xf32, parts = [1, 2]>) -> !ein.rel<8xf32, parts = [2]> {
  %r = ein.reshape %x [[0, 1]] {spec = #ein.spec<[1, 2]>} : !ein.rel<1x8xf32, parts = [1, 2]> -> !ein.rel<8xf32, parts = [2]>
  return %r : !ein.rel<8xf32, parts = [2]>
}
