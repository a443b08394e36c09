// RUN: ein-opt %s -split-input-file --ein-autodiff | FileCheck %s
// RUN: ein-opt %s -split-input-file --ein-autodiff | ein-opt -split-input-file | FileCheck %s

// A matmul's weight gradient is a matmul of the result's adjoint and the
// input (which the derivative reads; the weight itself it does not), and
// exp's derivative reads its own value.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: -> (tensor<f32>, tensor<8x2xf32>)
// CHECK: %[[Y:.*]] = ein.join_agg add ins(%[[X:[a-z0-9_]+]][d0, d2], %[[W:[a-z0-9_]+]][d2, d1]
// CHECK: %[[L:.*]] = ein.join_agg add ins(%[[Y]][d0, d1]
// CHECK: %[[SEED:.*]] = ein.join_agg none ins() out[] : tensor<f32>
// CHECK: arith.constant 1.0
// CHECK: %[[DY:.*]] = ein.join_agg none ins(%[[SEED]][], %[[Y]][d0, d1] : tensor<f32>, tensor<4x2xf32>) out[d0, d1] : tensor<4x2xf32>
// CHECK: ^bb0(%[[S:.*]]: f32, %[[V:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[V]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[S]], %[[E]]
// CHECK-NEXT: ein.yield %[[P]]
// CHECK: %[[DW:.*]] = ein.join_agg add ins(%[[DY]][d0, d1], %[[X]][d0, d2] : tensor<4x2xf32>, tensor<4x8xf32>) out[d2, d1] : tensor<8x2xf32>
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[B]]
// CHECK-NEXT: ein.yield %[[M]]
// CHECK: return %[[L]], %[[DW]] : tensor<f32>, tensor<8x2xf32>
func.func @matmul(%x: tensor<4x8xf32>, %w: tensor<8x2xf32> {ein.weight}) -> tensor<f32> {
  %y = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<4x8xf32>, tensor<8x2xf32>) out[d0, d1] : tensor<4x2xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %l = ein.join_agg add ins(%y[d0, d1] : tensor<4x2xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    ein.yield %e : f32
  }
  return %l : tensor<f32>
}

// -----

// A max aggregation: the adjoint goes to the terms equal to the maximum,
// divided by how many there are (their count is a join-agg of its own);
// an argument marked {ein.grad} gets its gradient too, after the weight's.
// CHECK-LABEL: func.func @max
// CHECK-SAME: -> (tensor<1xf32>, tensor<3x4xf32>, tensor<3xf32>)
// CHECK: %[[M:.*]] = ein.join_agg max ins(%[[X:[a-z0-9_]+]][d0, d1], %[[S:[a-z0-9_]+]][d0]
// CHECK: %[[N:.*]] = ein.join_agg add ins(%[[X]][d0, d1], %[[S]][d0], %[[M]][d0] : tensor<3x4xf32>, tensor<3xf32>, tensor<3xf32>) out[d0] : tensor<3xf32>
// CHECK: arith.cmpf oeq
// CHECK: %[[DX:.*]] = ein.join_agg none ins(%{{.*}}[d0], %[[X]][d0, d1], %[[S]][d0], %[[M]][d0], %[[N]][d0] : {{.*}}) out[d0, d1] : tensor<3x4xf32>
// CHECK: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: return %{{.*}}, %[[DX]], %{{.*}} : tensor<1xf32>, tensor<3x4xf32>, tensor<3xf32>
func.func @max(%x: tensor<3x4xf32> {ein.weight}, %s: tensor<3xf32> {ein.grad}) -> tensor<1xf32> {
  %m = ein.join_agg max ins(%x[d0, d1], %s[d0] : tensor<3x4xf32>, tensor<3xf32>) out[d0] : tensor<3xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    ein.yield %p : f32
  }
  %l = ein.join_agg add ins(%m[d0] : tensor<3xf32>) out[d1] : tensor<1xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %l : tensor<1xf32>
}

// -----

// Reshape, slice and concat: their adjoints are the reshape back, the
// slice's adjoint padded with zeros by concats, and slices of the concat's.
// CHECK-LABEL: func.func @layout
// CHECK: %[[DS:.*]] = ein.slice %[[DC:[a-z0-9_]+]] [0] [2] : tensor<8xf32> -> tensor<2xf32>
// CHECK: %[[DR:.*]] = ein.slice %[[DC]] [2] [6] : tensor<8xf32> -> tensor<6xf32>
// CHECK: %[[Z:.*]] = ein.join_agg none ins() out[d0] : tensor<1xf32>
// CHECK: %[[Z2:.*]] = ein.join_agg none ins() out[d0] : tensor<1xf32>
// CHECK: %[[DV:.*]] = ein.concat dim 0 %[[Z]], %[[DS]], %[[Z2]] : tensor<1xf32>, tensor<2xf32>, tensor<1xf32> -> tensor<4xf32>
// CHECK: %[[DW:.*]] = ein.reshape %[[DR]] {{\[\[}}0, 1]] : tensor<6xf32> -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]], %[[DV]]
func.func @layout(%w: tensor<2x3xf32> {ein.weight}, %v: tensor<4xf32> {ein.weight}) -> tensor<f32> {
  %r = ein.reshape %w [[0, 1]] : tensor<2x3xf32> -> tensor<6xf32>
  %s = ein.slice %v [1] [2] : tensor<4xf32> -> tensor<2xf32>
  %c = ein.concat dim 0 %s, %r : tensor<2xf32>, tensor<6xf32> -> tensor<8xf32>
  %l = ein.join_agg add ins(%c[d0] : tensor<8xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    %q = arith.mulf %a, %a : f32
    ein.yield %q : f32
  }
  return %l : tensor<f32>
}

// -----

// A gather's adjoint is a scatter-add: each table row sums the adjoint's
// rows whose index picked it (a join-agg over the lookup's loops, the row
// read with ein.index); the integer indices get no gradient.
// CHECK-LABEL: func.func @embedding
// CHECK: %[[E:.*]] = ein.gather %[[T:[a-z0-9_]+]][%[[I:[a-z0-9_]+]]]
// CHECK: %[[DT:.*]] = ein.join_agg add ins(%{{.*}}[d0, d1, d3], %[[I]][d0, d1] : tensor<2x3x4xf32>, tensor<2x3xi64>) out[d2, d3] : tensor<10x4xf32>
// CHECK-NEXT: ^bb0(%[[D:.*]]: f32, %[[ID:.*]]: i64):
// CHECK-NEXT: %[[ROW:.*]] = ein.index 2 : index
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT: %[[HIT:.*]] = arith.cmpi eq, %[[P]], %[[ROW]] : index
// CHECK: arith.select %[[HIT]], %[[D]]
// CHECK: return %{{.*}}, %[[DT]] : tensor<f32>, tensor<10x4xf32>
func.func @embedding(%t: tensor<10x4xf32> {ein.weight}, %i: tensor<2x3xi64>) -> tensor<f32> {
  %e = ein.gather %t[%i] : tensor<10x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %l = ein.join_agg add ins(%e[d0, d1, d2] : tensor<2x3x4xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    %q = arith.mulf %a, %a : f32
    ein.yield %q : f32
  }
  return %l : tensor<f32>
}

// -----

// A convolution's adjoints are convolutions: the input's convolves the
// result's adjoint, dilated by the stride (a zero after each element: a
// reshape, a concat of zeros, a reshape back, a slice), with the filter
// flipped (a join-agg picking i' = 2 - i by its loop indices) and its
// channels swapped, at stride 1; the filter's convolves the input, batch
// and channels swapped, with the adjoint as the filter, its dilation the
// forward stride.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: -> (tensor<f32>, tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>)
// CHECK: %[[DY:.*]] = ein.join_agg none ins(%{{.*}}[], %{{.*}}[d0, d1, d2, d3] : tensor<f32>, tensor<2x4x5x5xf32>)
// CHECK: ein.reshape %[[DY]] {{.*}} -> tensor<2x4x5x1x5xf32>
// CHECK: ein.concat dim 3 {{.*}} -> tensor<2x4x5x2x5xf32>
// CHECK: ein.slice {{.*}} [0, 0, 0, 0] [2, 4, 9, 5]
// CHECK: %[[DYD:.*]] = ein.slice {{.*}} [0, 0, 0, 0] [2, 4, 9, 9]
// CHECK: ein.join_agg add ins(%{{.*}}[d0, d2, d1, d5, d6] : tensor<1x4x3x3x3xf32>) out[d0, d1, d2, d3, d4] : tensor<1x3x4x3x3xf32>
// CHECK: ein.index 6
// CHECK: ein.index 4
// CHECK: arith.cmpi eq
// CHECK: %[[FLIPPED:.*]] = ein.reshape {{.*}} -> tensor<3x4x3x3xf32>
// CHECK: %[[DX:.*]] = ein.conv %[[DYD]], %[[FLIPPED]] {dilations = array<i64: 1, 1>, layout = "nchw", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<2x4x9x9xf32>, tensor<3x4x3x3xf32> -> tensor<2x3x9x9xf32>
// CHECK: %[[XT:.*]] = ein.join_agg none ins(%arg0[d1, d0, d2, d3] : tensor<2x3x9x9xf32>) out[d0, d1, d2, d3] : tensor<3x2x9x9xf32>
// CHECK: %[[DYT:.*]] = ein.join_agg none ins(%[[DY]][d1, d0, d2, d3] : tensor<2x4x5x5xf32>) out[d0, d1, d2, d3] : tensor<4x2x5x5xf32>
// CHECK: %[[DWT:.*]] = ein.conv %[[XT]], %[[DYT]] {dilations = array<i64: 2, 2>, layout = "nchw", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<3x2x9x9xf32>, tensor<4x2x5x5xf32> -> tensor<3x4x3x3xf32>
// CHECK: %[[DW:.*]] = ein.join_agg none ins(%[[DWT]][d1, d0, d2, d3] : tensor<3x4x3x3xf32>) out[d0, d1, d2, d3] : tensor<4x3x3x3xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DW]]
func.func @conv(%x: tensor<2x3x9x9xf32> {ein.grad}, %w: tensor<4x3x3x3xf32> {ein.weight}) -> tensor<f32> {
  %y = ein.conv %x, %w {layout = "nchw", strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x5x5xf32>
  %l = ein.join_agg add ins(%y[d0, d1, d2, d3] : tensor<2x4x5x5xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %a : f32
    ein.yield %m : f32
  }
  return %l : tensor<f32>
}

// -----

// A max pool a gradient flows through is rewritten as its windows: the
// input padded with -inf, a strided slice per window position (9 of a
// 3x3 window) stacked on a fifth dimension, and a max join-agg over them,
// whose adjoint (shared among ties) the slices carry back.
// CHECK-LABEL: func.func @pool
// CHECK-SAME: -> (tensor<f32>, tensor<1x2x5x5xf32>)
// CHECK-NOT: ein.pool
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: ein.concat dim 2 %{{.*}}, %arg0, %{{.*}} : tensor<1x2x1x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x2x5xf32> -> tensor<1x2x8x5xf32>
// CHECK: ein.concat dim 4 {{.*}} -> tensor<1x2x3x3x9xf32>
// CHECK: %[[MAX:.*]] = ein.join_agg max ins(%{{.*}}[d0, d1, d2, d3, d4] : tensor<1x2x3x3x9xf32>) out[d0, d1, d2, d3] : tensor<1x2x3x3xf32>
// CHECK: %[[LOSS:.*]] = ein.join_agg add ins(%[[MAX]][d0, d1, d2, d3]
// CHECK: return %[[LOSS]], %{{.*}} : tensor<f32>, tensor<1x2x5x5xf32>
func.func @pool(%x: tensor<1x2x5x5xf32> {ein.grad}) -> tensor<f32> {
  %p = ein.pool max %x {layout = "nchw", window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %l = ein.join_agg add ins(%p[d0, d1, d2, d3] : tensor<1x2x3x3xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %l : tensor<f32>
}

// -----

// A weight's gradient summed over batch and tokens is written as one sum
// over their product: both operands reshaped, the two summed loops one, the
// product a library gemm takes (a sum over two loops is a generated kernel).
// CHECK-LABEL: func.func @tokens
// CHECK: %[[DY:.*]] = ein.reshape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<4x8x32xf32> -> tensor<32x32xf32>
// CHECK: %[[X:.*]] = ein.reshape %arg0 {{\[\[}}0, 1], [2]] : tensor<4x8x16xf32> -> tensor<32x16xf32>
// CHECK: %[[DW:.*]] = ein.join_agg add ins(%[[DY]][d0, d1], %[[X]][d0, d2] : tensor<32x32xf32>, tensor<32x16xf32>) out[d1, d2] : tensor<32x16xf32>
// CHECK: return %{{.*}}, %[[DW]]
func.func @tokens(%x: tensor<4x8x16xf32>, %w: tensor<32x16xf32> {ein.weight}) -> tensor<f32> {
  %y = ein.join_agg add ins(%x[d0, d1, d3], %w[d2, d3] : tensor<4x8x16xf32>, tensor<32x16xf32>) out[d0, d1, d2] : tensor<4x8x32xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %l = ein.join_agg add ins(%y[d0, d1, d2] : tensor<4x8x32xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %a : f32
    ein.yield %m : f32
  }
  return %l : tensor<f32>
}

// -----

// A bf16 weight's gradient sums and stays in f32 (mixed-precision
// training's gradients); the activations' adjoints keep their bf16.
// CHECK-LABEL: func.func @tokens_bf16
// CHECK-SAME: -> (tensor<f32>, tensor<32x16xf32>)
// CHECK: ein.join_agg none ins({{.*}}) out[d0, d1, d2] : tensor<4x8x32xbf16>
// CHECK: %[[DW:.*]] = ein.join_agg add ins(%{{.*}}[d0, d1], %{{.*}}[d0, d2] : tensor<32x32xbf16>, tensor<32x16xbf16>) out[d1, d2] : tensor<32x16xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<32x16xf32>
func.func @tokens_bf16(%x: tensor<4x8x16xbf16>, %w: tensor<32x16xbf16> {ein.weight}) -> tensor<f32> {
  %y = ein.join_agg add ins(%x[d0, d1, d3], %w[d2, d3] : tensor<4x8x16xbf16>, tensor<32x16xbf16>) out[d0, d1, d2] : tensor<4x8x32xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    ein.yield %m : f32
  }
  %l = ein.join_agg add ins(%y[d0, d1, d2] : tensor<4x8x32xbf16>) out[] : tensor<f32> {
  ^bb0(%a: bf16):
    %ae = arith.extf %a : bf16 to f32
    %m = arith.mulf %ae, %ae : f32
    ein.yield %m : f32
  }
  return %l : tensor<f32>
}
