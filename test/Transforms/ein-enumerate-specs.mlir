// RUN: ein-opt %s -split-input-file -ein-enumerate-specs | FileCheck %s

// Every ordered factorisation of 8 over the three loops, outer cuts first.
// CHECK-LABEL: func.func @matmul
// CHECK: ein.join_agg add {{.*}} attributes {ein.candidates = [#ein.spec<[8, 1, 1]>, #ein.spec<[4, 2, 1]>, #ein.spec<[4, 1, 2]>, #ein.spec<[2, 4, 1]>, #ein.spec<[2, 2, 2]>, #ein.spec<[2, 1, 4]>, #ein.spec<[1, 8, 1]>, #ein.spec<[1, 4, 2]>, #ein.spec<[1, 2, 4]>, #ein.spec<[1, 1, 8]>]}
module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x64xf32>
  }
}

// -----

// No loop is cut beyond its size; uneven cuts are fine (6 rows in 4).
// CHECK-LABEL: func.func @small
// CHECK: ein.candidates = [#ein.spec<[4, 1]>, #ein.spec<[2, 2]>]
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @small(%a: tensor<6x2xf32>) -> tensor<6x2xf32> {
    %c = ein.join_agg none ins(%a[d0, d1] : tensor<6x2xf32>) out[d0, d1] : tensor<6x2xf32> {
    ^bb0(%x: f32):
      ein.yield %x : f32
    }
    return %c : tensor<6x2xf32>
  }
}

// -----

// On CUDA the attention kernel has no key-block combine yet, so the key loop
// stays whole; query heads (kv_head, group) are cut only as one dimension
// can be: the group alone never (its blocks would be strided).
// CHECK-LABEL: func.func @gqa_cuda
// CHECK: ein.attention {{.*}}ein.candidates = [#ein.spec<[1, 2, 1, 1, 1]>, #ein.spec<[1, 1, 1, 2, 1]>]
module attributes {ein.target = #ein.target<devices = 2, chip = "sm_90">} {
  func.func @gqa_cuda(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
    %o = ein.attention %q, %k, %k {causal, group = 4 : i64} : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
    return %o : tensor<1x8x16x8xf32>
  }
}

// -----

// The CPU target runs every cut, the key loop included.
// CHECK-LABEL: func.func @gqa_host
// CHECK: ein.candidates = [#ein.spec<[1, 2, 1, 1, 1]>, #ein.spec<[1, 1, 1, 2, 1]>, #ein.spec<[1, 1, 1, 1, 2]>]
module attributes {ein.target = #ein.target<devices = 2, chip = "host">} {
  func.func @gqa_host(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
    %o = ein.attention %q, %k, %k {causal, group = 4 : i64} : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
    return %o : tensor<1x8x16x8xf32>
  }
}

// -----

// Softmax keeps its dimension whole, RMSNorm its last one; a reshape cuts a
// collapsed group only on its outer dimension (4x3 -> 12 in 2 parts splits
// 12 at 6 either way; cutting the 3 would not).
// CHECK-LABEL: func.func @composites_and_layout
// CHECK: ein.softmax {{.*}}ein.candidates = [#ein.spec<[2, 1]>]
// CHECK: ein.rms_norm {{.*}}ein.candidates = [#ein.spec<[2, 1]>]
// CHECK: ein.reshape {{.*}}ein.candidates = [#ein.spec<[2, 1]>]
// CHECK: ein.slice {{.*}}ein.candidates = [#ein.spec<[2, 1]>, #ein.spec<[1, 2]>]
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @composites_and_layout(%x: tensor<4x3xf32>, %w: tensor<3xf32>) -> (tensor<12xf32>, tensor<2x2xf32>) {
    %s = ein.softmax %x dim 1 : tensor<4x3xf32>
    %n = ein.rms_norm %s, %w eps 1.0e-5 : tensor<4x3xf32>, tensor<3xf32>
    %r = ein.reshape %n [[0, 1]] : tensor<4x3xf32> -> tensor<12xf32>
    %c = ein.slice %n [1, 1] [2, 2] : tensor<4x3xf32> -> tensor<2x2xf32>
    return %r, %c : tensor<12xf32>, tensor<2x2xf32>
  }
}

// -----

// One device: the one spec that cuts nothing; and through the whole
// pipeline the relations are single blocks with nothing to move.
// CHECK-LABEL: func.func @one_device
// CHECK: ein.candidates = [#ein.spec<[1, 1, 1]>]
module attributes {ein.target = #ein.target<devices = 1>} {
  func.func @one_device(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<4x4xf32>, tensor<4x4xf32>) out[d0, d2] : tensor<4x4xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<4x4xf32>
  }
}

// -----

// A grouped convolution (3 groups of 2 input and 2 output channels; loops
// n, oh, ow, g, f, c): its channel dimensions span (g, f) and (g, c), so g
// is cut only into parts of whole groups that are an ordinary cut of the
// channels (3, not 2), and f or c only under g cut into single groups.
// CHECK-LABEL: func.func @grouped_on_2
// CHECK: ein.conv {{.*}}ein.candidates = [#ein.spec<[1, 2, 1, 1, 1, 1]>, #ein.spec<[1, 1, 2, 1, 1, 1]>], groups = 3 : i64
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @grouped_on_2(%x: tensor<1x6x3x3xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
    %c = ein.conv %x, %w {layout = "nchw", groups = 3 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<1x6x3x3xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
    return %c : tensor<1x6x3x3xf32>
  }
}

// -----

// CHECK-LABEL: func.func @grouped_on_6
// CHECK: ein.conv {{.*}}ein.candidates = [#ein.spec<[1, 3, 2, 1, 1, 1]>, #ein.spec<[1, 2, 3, 1, 1, 1]>, #ein.spec<[1, 2, 1, 3, 1, 1]>, #ein.spec<[1, 1, 2, 3, 1, 1]>, #ein.spec<[1, 1, 1, 3, 2, 1]>, #ein.spec<[1, 1, 1, 3, 1, 2]>], groups = 3 : i64
module attributes {ein.target = #ein.target<devices = 6>} {
  func.func @grouped_on_6(%x: tensor<1x6x3x3xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
    %c = ein.conv %x, %w {layout = "nchw", groups = 3 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<1x6x3x3xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
    return %c : tensor<1x6x3x3xf32>
  }
}
