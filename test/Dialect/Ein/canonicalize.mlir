// RUN: ein-opt %s -split-input-file -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = ein.reshape %x [[0, 1]] : tensor<4x8xf32> -> tensor<32xf32>
  %e = ein.reshape %c [[0, 1]] : tensor<32xf32> -> tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// A reshape chain that does not come back to the source stays.
// CHECK-LABEL: func.func @reshape_chain_kept
// CHECK: ein.reshape
// CHECK: ein.reshape
func.func @reshape_chain_kept(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %c = ein.reshape %x [[0, 1]] : tensor<4x8xf32> -> tensor<32xf32>
  %e = ein.reshape %c [[0, 1]] : tensor<32xf32> -> tensor<2x16xf32>
  return %e : tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @identity_reshape
// CHECK-NOT: ein.reshape
func.func @identity_reshape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = ein.reshape %x [[0], [1]] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @full_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[P:.*]] = ein.slice %[[X]] [0, 0] [4, 4]
// CHECK-NEXT: return %[[X]], %[[P]]
func.func @full_slice(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %s = ein.slice %x [0, 0] [4, 8] : tensor<4x8xf32> -> tensor<4x8xf32>
  %p = ein.slice %x [0, 0] [4, 4] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %s, %p : tensor<4x8xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @single_concat
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @single_concat(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = ein.concat dim 0 %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// A repartition into the same relation type moves nothing.
// CHECK-LABEL: func.func @noop_repartition
// CHECK-SAME: (%[[R:.*]]: !ein.rel
// CHECK-NEXT: %[[M:.*]] = ein.repartition %[[R]]
// CHECK-NEXT: return %[[R]], %[[M]]
func.func @noop_repartition(%r: !ein.rel<8x8xf32, parts = [2, 1]>) -> (!ein.rel<8x8xf32, parts = [2, 1]>, !ein.rel<8x8xf32, parts = [1, 2]>) {
  %same = ein.repartition %r : !ein.rel<8x8xf32, parts = [2, 1]> -> !ein.rel<8x8xf32, parts = [2, 1]>
  %moved = ein.repartition %r : !ein.rel<8x8xf32, parts = [2, 1]> -> !ein.rel<8x8xf32, parts = [1, 2]>
  return %same, %moved : !ein.rel<8x8xf32, parts = [2, 1]>, !ein.rel<8x8xf32, parts = [1, 2]>
}

// -----

// Dead pure ops go away; ops are pure so DCE applies.
// CHECK-LABEL: func.func @dead_code
// CHECK-NOT: ein.
// CHECK: return
func.func @dead_code(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = ein.softmax %x dim 1 : tensor<4x8xf32>
  %n = ein.rms_norm %x, %w eps 1.0e-5 : tensor<4x8xf32>, tensor<8xf32>
  return %x : tensor<4x8xf32>
}
