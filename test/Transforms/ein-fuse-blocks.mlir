// RUN: ein-opt %s -split-input-file --ein-fuse-blocks | FileCheck %s

// A chain of elementwise blocks on one GPU becomes one block reading the
// chain's inputs; the bf16 producer's f32 scalar is rounded to bf16, as its
// buffer would have stored it, before the consumer reads it.

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[Y:.*]]: tensor<8x4xbf16>, %[[Z:.*]]: tensor<4x8xbf16>)
// CHECK: %[[F:.*]] = ein.join_agg none ins(%[[Z]][d0, d1], %[[Y]][d1, d0], %[[X]][d0, d1] : tensor<4x8xbf16>, tensor<8x4xbf16>, tensor<4x8xbf16>) out[d0, d1] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 4, 0>} : tensor<4x8xbf16> {
// CHECK-NEXT: ^bb0(%[[ZA:.*]]: bf16, %[[YA:.*]]: bf16, %[[XA:.*]]: bf16):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[XA]] : bf16 to f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[XW]] : f32
// CHECK-NEXT: %[[R1:.*]] = arith.truncf %[[NEG]] : f32 to bf16
// CHECK-NEXT: %[[A:.*]] = arith.extf %[[R1]] : bf16 to f32
// CHECK-NEXT: %[[B:.*]] = arith.extf %[[YA]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[R2:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: %[[C:.*]] = arith.extf %[[ZA]] : bf16 to f32
// CHECK-NEXT: %[[D:.*]] = arith.extf %[[R2]] : bf16 to f32
// CHECK-NEXT: %[[PROD:.*]] = arith.mulf %[[C]], %[[D]] : f32
// CHECK-NEXT: ein.yield %[[PROD]] : f32
// CHECK: return %[[F]]
func.func @chain(%x: tensor<4x8xbf16>, %y: tensor<8x4xbf16>, %z: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %n = ein.join_agg none ins(%x[d0, d1] : tensor<4x8xbf16>) out[d0, d1] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 4, 0>} : tensor<4x8xbf16> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    %m = arith.negf %w : f32
    ein.yield %m : f32
  }
  %s = ein.join_agg none ins(%n[d0, d1], %y[d1, d0] : tensor<4x8xbf16>, tensor<8x4xbf16>) out[d0, d1] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 4, 0>} : tensor<4x8xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %m = arith.addf %aw, %bw : f32
    ein.yield %m : f32
  }
  %p = ein.join_agg none ins(%z[d0, d1], %s[d0, d1] : tensor<4x8xbf16>, tensor<4x8xbf16>) out[d0, d1] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 4, 0>} : tensor<4x8xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %m = arith.mulf %aw, %bw : f32
    ein.yield %m : f32
  }
  return %p : tensor<4x8xbf16>
}

// -----

// A transposing producer fuses into a row-sum reduction: the producer's
// loops map onto the consumer's through the transpose, and its ein.index
// reads the consumer's loop shifted between the two blocks' offsets (the
// producer's rows start at 8, the consumer's columns at 2: +6).

// CHECK-LABEL: func.func @into_reduction
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>)
// CHECK: %[[R:.*]] = ein.join_agg add ins(%[[X]][d1, d0] : tensor<4x6xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 2>} : tensor<6xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: %[[I:.*]] = ein.index 1 : index
// CHECK-NEXT: %[[SHIFT:.*]] = arith.constant 6 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK-NEXT: %[[ROWI:.*]] = arith.index_cast %[[ROW]] : index to i64
// CHECK-NEXT: %[[ROWF:.*]] = arith.sitofp %[[ROWI]] : i64 to f32
// CHECK-NEXT: %[[V:.*]] = arith.mulf %[[A]], %[[ROWF]] : f32
// CHECK-NEXT: ein.yield %[[V]] : f32
// CHECK: return %[[R]]
func.func @into_reduction(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  %t = ein.join_agg none ins(%x[d0, d1] : tensor<4x6xf32>) out[d1, d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 8, 0>} : tensor<6x4xf32> {
  ^bb0(%a: f32):
    %i = ein.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %m = arith.mulf %a, %f : f32
    ein.yield %m : f32
  }
  %r = ein.join_agg add ins(%t[d0, d1] : tensor<6x4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 2>} : tensor<6xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %r : tensor<6xf32>
}

// -----

// Left alone: a producer on another GPU, a producer read twice, a value a
// consumer broadcasts (recomputing it per row), and a reduction producer.

// CHECK-LABEL: func.func @unfusible
// CHECK-COUNT-8: ein.join_agg
// CHECK-NOT: ein.join_agg
func.func @unfusible(%x: tensor<4xf32>, %m: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<3xf32>) {
  %other = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 0>} : tensor<4xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    ein.yield %n : f32
  }
  %here = ein.join_agg none ins(%other[d0] : tensor<4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<4xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    ein.yield %n : f32
  }
  %twice = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<4xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    ein.yield %n : f32
  }
  %sq = ein.join_agg none ins(%twice[d0], %twice[d0] : tensor<4xf32>, tensor<4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %n = arith.mulf %a, %b : f32
    ein.yield %n : f32
  }
  %bias = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<4xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    ein.yield %n : f32
  }
  %rows = ein.join_agg none ins(%m[d0, d1], %bias[d1] : tensor<3x4xf32>, tensor<4xf32>) out[d0, d1] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0>} : tensor<3x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %n = arith.addf %a, %b : f32
    ein.yield %n : f32
  }
  %sum = ein.join_agg add ins(%m[d0, d1] : tensor<3x4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0>} : tensor<3xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %neg = ein.join_agg none ins(%sum[d0] : tensor<3xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<3xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    ein.yield %n : f32
  }
  return %here, %sq, %rows, %neg : tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<3xf32>
}

// -----

// RoPE after the head transpose: the transpose is read through a reshape
// that splits the head dimension, by a reduction that reads each element
// twice (once per rotated output). A copy recomputes nothing, so it fuses:
// its input is viewed with the head dimension split the same way (a
// reshape, no data moved) and the rotation reads it transposed directly.

// CHECK-LABEL: func.func @transpose_into_rope
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x4x16xbf16>, %[[T:.*]]: tensor<2x2x8x8xbf16>)
// CHECK: %[[V:.*]] = ein.reshape %[[Q]] {{\[}}[0], [1], [2], [3, 4]] {device = 0 : i64} : tensor<1x8x4x16xbf16> -> tensor<1x8x4x2x8xbf16>
// CHECK-NEXT: %[[R:.*]] = ein.join_agg add ins(%[[T]][d3, d5, d2, d4], %[[V]][d0, d2, d1, d5, d4] : tensor<2x2x8x8xbf16>, tensor<1x8x4x2x8xbf16>) out[d0, d1, d2, d3, d4] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0, 0, 0, 0>} : tensor<1x4x8x2x8xbf16> {
// CHECK-NOT: ein.join_agg
// CHECK: return %[[R]]
func.func @transpose_into_rope(%q: tensor<1x8x4x16xbf16>, %t: tensor<2x2x8x8xbf16>) -> tensor<1x4x8x2x8xbf16> {
  %h = ein.join_agg none ins(%q[d0, d1, d2, d3] : tensor<1x8x4x16xbf16>) out[d0, d2, d1, d3] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0, 0>} : tensor<1x4x8x16xbf16> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %s = ein.reshape %h [[0], [1], [2], [3, 4]] {device = 0 : i64} : tensor<1x4x8x16xbf16> -> tensor<1x4x8x2x8xbf16>
  %r = ein.join_agg add ins(%t[d3, d5, d2, d4], %s[d0, d1, d2, d5, d4] : tensor<2x2x8x8xbf16>, tensor<1x4x8x2x8xbf16>) out[d0, d1, d2, d3, d4] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0, 0, 0, 0>} : tensor<1x4x8x2x8xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %m = arith.mulf %aw, %bw : f32
    ein.yield %m : f32
  }
  return %r : tensor<1x4x8x2x8xbf16>
}

// -----

// Left alone through a reshape: a producer that computes, read twice per
// element by a rotation (it would run twice), and one read one to one
// whose split loop ein.index reads (the split would need its parts
// recombined).

// CHECK-LABEL: func.func @not_through_reshape
// CHECK-COUNT-4: ein.join_agg
// CHECK: return
func.func @not_through_reshape(%q: tensor<4x16xf32>, %t: tensor<2x2x8xf32>) -> (tensor<4x2x8xf32>, tensor<4x2x8xf32>) {
  %n = ein.join_agg none ins(%q[d0, d1] : tensor<4x16xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<4x16xf32> {
  ^bb0(%a: f32):
    %m = arith.negf %a : f32
    ein.yield %m : f32
  }
  %s = ein.reshape %n [[0], [1, 2]] {device = 0 : i64} : tensor<4x16xf32> -> tensor<4x2x8xf32>
  %r = ein.join_agg add ins(%t[d1, d3, d2], %s[d0, d3, d2] : tensor<2x2x8xf32>, tensor<4x2x8xf32>) out[d0, d1, d2] attributes {device = 0 : i64} : tensor<4x2x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %c = ein.join_agg none ins(%q[d0, d1] : tensor<4x16xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<4x16xf32> {
  ^bb0(%a: f32):
    %i = ein.index 1 : index
    %z = arith.constant 0.0 : f32
    %lo = arith.constant 8 : index
    %keep = arith.cmpi ult, %i, %lo : index
    %m = arith.select %keep, %a, %z : f32
    ein.yield %m : f32
  }
  %s2 = ein.reshape %c [[0], [1, 2]] {device = 0 : i64} : tensor<4x16xf32> -> tensor<4x2x8xf32>
  %r2 = ein.join_agg none ins(%s2[d0, d1, d2] : tensor<4x2x8xf32>) out[d0, d1, d2] attributes {device = 0 : i64} : tensor<4x2x8xf32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %a : f32
    ein.yield %m : f32
  }
  return %r, %r2 : tensor<4x2x8xf32>, tensor<4x2x8xf32>
}

// -----

// A transpose read by a library gemm stays its own block: fused, the gemm
// would read its operand in a layout the library may not take.

// CHECK-LABEL: func.func @copy_into_gemm
// CHECK-COUNT-2: ein.join_agg
// CHECK: return
func.func @copy_into_gemm(%x: tensor<16x8xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %t = ein.join_agg none ins(%x[d0, d1] : tensor<16x8xf32>) out[d1, d0] attributes {device = 0 : i64} : tensor<8x16xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %c = ein.join_agg add ins(%t[d0, d2], %w[d2, d1] : tensor<8x16xf32>, tensor<16x4xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %c : tensor<8x4xf32>
}

// -----

// A producer that broadcasts (its output has a loop none of its inputs
// reads) stays apart from a consumer that reduces that loop away: fused,
// the loop would be read and written by nothing and have no size.

// CHECK-LABEL: func.func @broadcast_into_reduction
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xi64>)
// CHECK: %[[B:.*]] = ein.join_agg none ins(%[[X]][d0, d2] : tensor<2x5xi64>) out[d0, d1, d2]
// CHECK: %[[S:.*]] = ein.join_agg add ins(%[[B]][d0, d1, d2] : tensor<2x3x5xi64>) out[]
// CHECK: return %[[S]]
func.func @broadcast_into_reduction(%x: tensor<2x5xi64>) -> tensor<f32> {
  %b = ein.join_agg none ins(%x[d0, d2] : tensor<2x5xi64>) out[d0, d1, d2] attributes {device = 0 : i64} : tensor<2x3x5xi64> {
  ^bb0(%a: i64):
    ein.yield %a : i64
  }
  %s = ein.join_agg add ins(%b[d0, d1, d2] : tensor<2x3x5xi64>) out[] attributes {device = 0 : i64} : tensor<f32> {
  ^bb0(%a: i64):
    %f = arith.sitofp %a : i64 to f32
    ein.yield %f : f32
  }
  return %s : tensor<f32>
}
