// RUN: ein-opt %s -split-input-file --ein-fuse-gemm-epilogues | FileCheck %s

// GPT-2's feed-forward in bf16 as ein-fuse-blocks leaves it: the bias add
// and the tanh GELU (x^3 as two products, rounded to bf16 between the
// steps) in one block after the gemm. One ein.gemm; the block and the
// gemm's own block are gone.

// CHECK-LABEL: func.func @bias_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xbf16>, %[[W:.*]]: tensor<32x64xbf16>, %[[B:.*]]: tensor<64xbf16>)
// CHECK-NEXT: %[[H:.*]] = ein.gemm gelu_tanh %[[X]], %[[W]] bias %[[B]] on 0 : (tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<64xbf16>) -> tensor<16x64xbf16>
// CHECK-NEXT: return %[[H]]
func.func @bias_gelu(%x: tensor<16x32xbf16>, %w: tensor<32x64xbf16>, %b: tensor<64xbf16>) -> tensor<16x64xbf16> {
  %c = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<16x32xbf16>, tensor<32x64xbf16>) out[d0, d1] attributes {device = 0 : i64} : tensor<16x64xbf16> {
  ^bb0(%p: bf16, %q: bf16):
    %pw = arith.extf %p : bf16 to f32
    %qw = arith.extf %q : bf16 to f32
    %m = arith.mulf %pw, %qw : f32
    ein.yield %m : f32
  }
  %h = ein.join_agg none ins(%c[d0, d1], %b[d1] : tensor<16x64xbf16>, tensor<64xbf16>) out[d0, d1] attributes {device = 0 : i64} : tensor<16x64xbf16> {
  ^bb0(%v: bf16, %bias: bf16):
    %vw = arith.extf %v : bf16 to f32
    %bw = arith.extf %bias : bf16 to f32
    %s = arith.addf %vw, %bw : f32
    %sr = arith.truncf %s : f32 to bf16
    %t = arith.extf %sr : bf16 to f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.7978845608028654 : f32
    %c3 = arith.constant 0.044715 : f32
    %t2 = arith.mulf %t, %t : f32
    %t3 = arith.mulf %t2, %t : f32
    %a = arith.mulf %c3, %t3 : f32
    %in = arith.addf %t, %a : f32
    %arg = arith.mulf %k, %in : f32
    %th = math.tanh %arg : f32
    %ht = arith.mulf %half, %t : f32
    %op = arith.addf %one, %th : f32
    %g = arith.mulf %ht, %op : f32
    ein.yield %g : f32
  }
  return %h : tensor<16x64xbf16>
}

// -----

// The same GELU written as the polynomial x/2 + x/2 tanh(k x + k' x^3) with
// the cube a power and the constants folded, on a transposed weight.

// CHECK-LABEL: func.func @gelu_power
// CHECK: ein.gemm gelu_tanh %{{.*}}, %{{.*}} on 1 {transpose_b} : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
// CHECK-NOT: ein.join_agg
func.func @gelu_power(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>) -> tensor<8x32xf32> {
  %c = ein.join_agg add ins(%x[d0, d2], %w[d1, d2] : tensor<8x16xf32>, tensor<32x16xf32>) out[d0, d1] attributes {device = 1 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %h = ein.join_agg none ins(%c[d0, d1] : tensor<8x32xf32>) out[d0, d1] attributes {device = 1 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32):
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %k = arith.constant 0.7978845608 : f32
    %k3 = arith.constant 0.0356774081 : f32
    %t3 = math.powf %t, %three : f32
    %lin = arith.mulf %t, %k : f32
    %cub = arith.mulf %k3, %t3 : f32
    %arg = arith.addf %lin, %cub : f32
    %th = math.tanh %arg : f32
    %h1 = arith.divf %t, %two : f32
    %h2 = arith.mulf %h1, %th : f32
    %g = arith.addf %h1, %h2 : f32
    ein.yield %g : f32
  }
  return %h : tensor<8x32xf32>
}

// -----

// A residual and a bias added to a batched product over a shared weight
// (the sum in any order); a ReLU of a bias add, its zero on the left.

// CHECK-LABEL: func.func @residual_relu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<16x16xf32>, %[[B:.*]]: tensor<16xf32>, %[[R:.*]]: tensor<2x8x16xf32>)
// CHECK: %[[Y:.*]] = ein.gemm none %[[X]], %[[W]] bias %[[B]] addend %[[R]] on 0 : (tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[Z:.*]] = ein.gemm relu %[[Y]], %[[W]] bias %[[B]] on 0 : (tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT: return %[[Z]]
func.func @residual_relu(%x: tensor<2x8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>, %r: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %c = ein.join_agg add ins(%x[d0, d1, d3], %w[d3, d2] : tensor<2x8x16xf32>, tensor<16x16xf32>) out[d0, d1, d2] attributes {device = 0 : i64} : tensor<2x8x16xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %y = ein.join_agg none ins(%r[d0, d1, d2], %c[d0, d1, d2], %b[d2] : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<16xf32>) out[d0, d1, d2] attributes {device = 0 : i64} : tensor<2x8x16xf32> {
  ^bb0(%res: f32, %v: f32, %bias: f32):
    %s = arith.addf %v, %bias : f32
    %t = arith.addf %res, %s : f32
    ein.yield %t : f32
  }
  %c2 = ein.join_agg add ins(%y[d0, d1, d3], %w[d3, d2] : tensor<2x8x16xf32>, tensor<16x16xf32>) out[d0, d1, d2] attributes {device = 0 : i64} : tensor<2x8x16xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %z = ein.join_agg none ins(%b[d2], %c2[d0, d1, d2] : tensor<16xf32>, tensor<2x8x16xf32>) out[d0, d1, d2] attributes {device = 0 : i64} : tensor<2x8x16xf32> {
  ^bb0(%bias: f32, %v: f32):
    %zero = arith.constant 0.0 : f32
    %s = arith.addf %bias, %v : f32
    %m = arith.maximumf %zero, %s : f32
    ein.yield %m : f32
  }
  return %z : tensor<2x8x16xf32>
}

// -----

// Left alone: GELU's erf form (no cuBLASLt epilogue computes it), a GELU
// whose tanh is off by 0.3%, an activation before the residual add, a
// per-row bias, a block on another GPU, a gemm read twice, a mask from
// ein.index, and a f32 gemm whose block writes f16.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: ein.gemm
// CHECK: return
func.func @left_alone(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>, %rows: tensor<8xf32>, %r: tensor<8x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) {
  %c0 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %erf = ein.join_agg none ins(%c0[d0, d1] : tensor<8x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.constant 0.7071067811865475 : f32
    %a = arith.mulf %t, %s : f32
    %e = math.erf %a : f32
    %ht = arith.mulf %half, %t : f32
    %op = arith.addf %one, %e : f32
    %g = arith.mulf %ht, %op : f32
    ein.yield %g : f32
  }
  %c1 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %off = ein.join_agg none ins(%c1[d0, d1] : tensor<8x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.8 : f32
    %c3 = arith.constant 0.044715 : f32
    %t2 = arith.mulf %t, %t : f32
    %t3 = arith.mulf %t2, %t : f32
    %a = arith.mulf %c3, %t3 : f32
    %in = arith.addf %t, %a : f32
    %arg = arith.mulf %k, %in : f32
    %th = math.tanh %arg : f32
    %ht = arith.mulf %half, %t : f32
    %op = arith.addf %one, %th : f32
    %g = arith.mulf %ht, %op : f32
    ein.yield %g : f32
  }
  %c2 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %late = ein.join_agg none ins(%c2[d0, d1], %r[d0, d1] : tensor<8x32xf32>, tensor<8x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32, %res: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %t, %zero : f32
    %s = arith.addf %m, %res : f32
    ein.yield %s : f32
  }
  %c3 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %perrow = ein.join_agg none ins(%c3[d0, d1], %rows[d0] : tensor<8x32xf32>, tensor<8xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32, %v: f32):
    %s = arith.addf %t, %v : f32
    ein.yield %s : f32
  }
  %c4 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %elsewhere = ein.join_agg none ins(%c4[d0, d1], %b[d1] : tensor<8x32xf32>, tensor<32xf32>) out[d0, d1] attributes {device = 1 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32, %v: f32):
    %s = arith.addf %t, %v : f32
    ein.yield %s : f32
  }
  %c5 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %twice = ein.join_agg none ins(%c5[d0, d1], %b[d1] : tensor<8x32xf32>, tensor<32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32, %v: f32):
    %s = arith.addf %t, %v : f32
    ein.yield %s : f32
  }
  %c6 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%c6[d0, d1] : tensor<8x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%t: f32):
    %i = ein.index 0 : index
    %j = ein.index 1 : index
    %lower = arith.cmpi ule, %j, %i : index
    %zero = arith.constant 0.0 : f32
    %m = arith.select %lower, %t, %zero : f32
    ein.yield %m : f32
  }
  return %erf, %off, %late, %perrow, %elsewhere, %twice, %c5, %masked : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func.func @narrow
// CHECK-NOT: ein.gemm
// CHECK: return
func.func @narrow(%x: tensor<8x16xbf16>, %w: tensor<16x32xbf16>) -> tensor<8x32xf16> {
  %c7 = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xbf16>, tensor<16x32xbf16>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xbf16> {
  ^bb0(%p: bf16, %q: bf16):
    %pw = arith.extf %p : bf16 to f32
    %qw = arith.extf %q : bf16 to f32
    %m = arith.mulf %pw, %qw : f32
    ein.yield %m : f32
  }
  %narrow = ein.join_agg none ins(%c7[d0, d1] : tensor<8x32xbf16>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf16> {
  ^bb0(%t: bf16):
    %tw = arith.extf %t : bf16 to f32
    ein.yield %tw : f32
  }
  return %narrow : tensor<8x32xf16>
}

// -----

// maxnumf(x, 0) turns a NaN into 0, which the epilogue's relu (PyTorch's:
// a NaN stays NaN) does not: it stays a kernel.

// CHECK-LABEL: func.func @relu_ignoring_nan
// CHECK: ein.join_agg add
// CHECK: ein.join_agg none
// CHECK: arith.maxnumf
// CHECK-NOT: ein.gemm
func.func @relu_ignoring_nan(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %c = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    ein.yield %m : f32
  }
  %z = ein.join_agg none ins(%c[d0, d1] : tensor<8x32xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x32xf32> {
  ^bb0(%v: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maxnumf %v, %zero : f32
    ein.yield %m : f32
  }
  return %z : tensor<8x32xf32>
}
