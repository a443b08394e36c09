// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<64x32xf32>, %[[B:.*]]: tensor<32x16xf32>)
// CHECK: %[[C:.*]] = ein.join_agg add ins(%[[A]][d0, d1], %[[B]][d1, d2] : tensor<64x32xf32>, tensor<32x16xf32>) out[d0, d2] : tensor<64x16xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: ein.yield %[[M]] : f32
// CHECK: return %[[C]]
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xf32>, tensor<32x16xf32>) out[d0, d2] : tensor<64x16xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  return %c : tensor<64x16xf32>
}

// -----

// bf16 operands accumulate in f32 by default; an explicit acc prints.
// CHECK-LABEL: func.func @bf16_matmul_acc
// CHECK: ein.join_agg add ins(%{{.*}}[d0, d1], %{{.*}}[d1, d2] : tensor<8x4xbf16>, tensor<4x2xbf16>) out[d0, d2] acc f64 : tensor<8x2xbf16>
// CHECK: ein.yield %{{.*}} : f64
func.func @bf16_matmul_acc(%a: tensor<8x4xbf16>, %b: tensor<4x2xbf16>) -> tensor<8x2xbf16> {
  %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x4xbf16>, tensor<4x2xbf16>) out[d0, d2] acc f64 : tensor<8x2xbf16> {
  ^bb0(%x: bf16, %y: bf16):
    %xf = arith.extf %x : bf16 to f64
    %yf = arith.extf %y : bf16 to f64
    %m = arith.mulf %xf, %yf : f64
    ein.yield %m : f64
  }
  return %c : tensor<8x2xbf16>
}

// -----

// A max reduction over the last dimension and a transpose (agg none).
// CHECK-LABEL: func.func @reduce_and_transpose
// CHECK: ein.join_agg max ins(%{{.*}}[d0, d1] : tensor<4x16xf32>) out[d0] : tensor<4xf32>
// CHECK: ein.join_agg none ins(%{{.*}}[d0, d1] : tensor<4x16xf32>) out[d1, d0] : tensor<16x4xf32>
func.func @reduce_and_transpose(%x: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<16x4xf32>) {
  %m = ein.join_agg max ins(%x[d0, d1] : tensor<4x16xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%v: f32):
    ein.yield %v : f32
  }
  %t = ein.join_agg none ins(%x[d0, d1] : tensor<4x16xf32>) out[d1, d0] : tensor<16x4xf32> {
  ^bb0(%v: f32):
    ein.yield %v : f32
  }
  return %m, %t : tensor<4xf32>, tensor<16x4xf32>
}

// -----

// A causal mask reads the loop indices with ein.index.
// CHECK-LABEL: func.func @causal_mask
// CHECK: %[[I:.*]] = ein.index 0 : index
// CHECK: %[[J:.*]] = ein.index 1 : index
// CHECK: arith.cmpi ule, %[[J]], %[[I]] : index
func.func @causal_mask(%s: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = ein.join_agg none ins(%s[d0, d1] : tensor<8x8xf32>) out[d0, d1] : tensor<8x8xf32> {
  ^bb0(%v: f32):
    %i = ein.index 0 : index
    %j = ein.index 1 : index
    %visible = arith.cmpi ule, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %m = arith.select %visible, %v, %ninf : f32
    ein.yield %m : f32
  }
  return %r : tensor<8x8xf32>
}

// -----

// No inputs: an iota along d1 sized by the result.
// CHECK-LABEL: func.func @iota
// CHECK: ein.join_agg none ins() out[d0, d1] : tensor<2x5xi64>
func.func @iota() -> tensor<2x5xi64> {
  %r = ein.join_agg none ins() out[d0, d1] : tensor<2x5xi64> {
  ^bb0:
    %j = ein.index 1 : index
    %c = arith.index_cast %j : index to i64
    ein.yield %c : i64
  }
  return %r : tensor<2x5xi64>
}

// -----

// A device-level block kernel.
// CHECK-LABEL: func.func @block_kernel
// CHECK: ein.join_agg none ins({{.*}}) out[d0, d1] attributes {device = 3 : i64} : tensor<4x4xf32>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @block_kernel(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %r = ein.join_agg none ins(%a[d0, d1], %b[d0, d1] : tensor<4x4xf32>, tensor<4x4xf32>) out[d0, d1] attributes {device = 3 : i64} : tensor<4x4xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      ein.yield %s : f32
    }
    return %r : tensor<4x4xf32>
  }
}
