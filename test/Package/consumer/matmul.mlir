// The package test's input (test/Package/run.sh): consumer-opt, built
// outside the tree on the installed package, and the installed ein-opt both
// run `--ein-import` on it.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x4xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[C:.*]] = ein.join_agg add ins(%[[A]][d0, d2], %[[B]][d2, d1] : tensor<8x16xf32>, tensor<16x4xf32>) out[d0, d1] : tensor<8x4xf32>
// CHECK: arith.mulf
// CHECK: return %[[C]]
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}
