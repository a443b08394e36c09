// RUN: ein-opt %s -split-input-file --ein-mark-weights="args=1,w2" -verify-diagnostics | FileCheck %s

// Positions and names (an argument's loc("name")) mark arguments as
// weights; what is already marked stays marked.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: %{{.*}}: tensor<8x16xf32>,
// CHECK-SAME: %{{.*}}: tensor<16x32xf32> {ein.weight},
// CHECK-SAME: %{{.*}}: tensor<32x4xf32> {ein.weight}
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x4xf32> loc("w2")) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}

// -----

// expected-error @+1 {{'func.func' op has no argument 'w2' to mark as a weight: it takes 2 arguments (give 0-based positions, or names given by an argument's loc("name"))}}
func.func @unnamed(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}

// -----

// Declarations have no body to compile and are left alone.
// CHECK-LABEL: func.func private @external
// CHECK-NOT: ein.weight
func.func private @external(%x: tensor<8x16xf32>)
