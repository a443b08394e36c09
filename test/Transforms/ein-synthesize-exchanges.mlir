// RUN: ein-opt %s -split-input-file -ein-plan -ein-synthesize-exchanges -verify-each | FileCheck %s

// Rows of A split over 4 GPUs, B (an activation) arrives whole on GPU 0 and
// is copied to the other join blocks; the ReLU runs where its block is.
// CHECK-LABEL: func.func @matmul_relu
// CHECK: %[[A:.*]] = ein.partition %arg0 : tensor<64x32xf32> -> !ein.rel<64x32xf32, parts = [4, 1], devices = [0, 1, 2, 3]>
// CHECK: %[[A0:.*]] = ein.extract_block %[[A]] [0, 0] replica 0
// CHECK: %[[A3:.*]] = ein.extract_block %[[A]] [3, 0] replica 0
// CHECK: %[[B:.*]] = ein.partition %arg1 : tensor<32x16xf32> -> !ein.rel<32x16xf32, parts = [1, 1], devices = [0]>
// CHECK: %[[B0:.*]] = ein.extract_block %[[B]] [0, 0] replica 0
// CHECK: %[[B1:.*]], %{{.*}} = ein.transfer %[[B0]] [0, 0] [32, 16] from 0 to 1 : tensor<32x16xf32> -> tensor<32x16xf32>
// CHECK: %[[B3:.*]], %{{.*}} = ein.transfer %[[B0]] [0, 0] [32, 16] from 0 to 3
// CHECK: %[[C0:.*]] = ein.join_agg add ins(%[[A0]][d0, d1], %[[B0]][d1, d2] : tensor<16x32xf32>, tensor<32x16xf32>) out[d0, d2] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<16x16xf32>
// CHECK: %[[C3:.*]] = ein.join_agg add ins(%[[A3]][d0, d1], %[[B3]][d1, d2] {{.*}} attributes {device = 3 : i64, ein.loop_offsets = array<i64: 48, 0, 0>}
// CHECK: %[[R0:.*]] = ein.join_agg none ins(%[[C0]][d0, d1] {{.*}} attributes {device = 0 : i64
// CHECK: %[[R3:.*]] = ein.join_agg none ins(%[[C3]][d0, d1] {{.*}} attributes {device = 3 : i64, ein.loop_offsets = array<i64: 48, 0>}
// CHECK: %[[REL:.*]] = ein.from_blocks %[[R0]], %{{.*}}, %{{.*}}, %[[R3]] : {{.*}} -> !ein.rel<64x16xf32, parts = [4, 1], devices = [0, 1, 2, 3]>
// CHECK: %[[OUT:.*]] = ein.assemble %[[REL]]
// CHECK: return %[[OUT]] : tensor<64x16xf32>
// CHECK-NOT: spec
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @matmul_relu(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xf32>, tensor<32x16xf32>) out[d0, d2] : tensor<64x16xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    %r = ein.join_agg none ins(%c[d0, d1] : tensor<64x16xf32>) out[d0, d1] : tensor<64x16xf32> {
    ^bb0(%x: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %x, %z : f32
      ein.yield %m : f32
    }
    return %r : tensor<64x16xf32>
  }
}

// -----

// The inner loop cut 4 ways: each GPU's partial stays in the f32
// accumulator, goes to the block's owner (GPU 0), and is aggregated into
// bf16 there.
// CHECK-LABEL: func.func @inner_cut
// CHECK: %[[P0:.*]] = ein.join_agg add {{.*}} attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<8x8xf32>
// CHECK: %[[P1:.*]] = ein.join_agg add {{.*}} attributes {device = 1 : i64, ein.loop_offsets = array<i64: 0, 1024, 0>} : tensor<8x8xf32>
// CHECK: %[[P3:.*]] = ein.join_agg add {{.*}} attributes {device = 3 : i64, ein.loop_offsets = array<i64: 0, 3072, 0>} : tensor<8x8xf32>
// CHECK: %[[T1:.*]], %{{.*}} = ein.transfer %[[P1]] [0, 0] [8, 8] from 1 to 0 : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: %[[T2:.*]], %{{.*}} = ein.transfer %{{.*}} [0, 0] [8, 8] from 2 to 0
// CHECK: %[[T3:.*]], %{{.*}} = ein.transfer %[[P3]] [0, 0] [8, 8] from 3 to 0
// CHECK: %[[S:.*]], %{{.*}} = ein.aggregate add %[[P0]], %[[T1]], %[[T2]], %[[T3]] on 0 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK: ein.from_blocks %[[S]] : tensor<8x8xbf16> -> !ein.rel<8x8xbf16, parts = [1, 1], devices = [0]>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @inner_cut(%a: tensor<8x4096xbf16>, %b: tensor<4096x8xbf16>) -> tensor<8x8xbf16> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x4096xbf16>, tensor<4096x8xbf16>) out[d0, d2] : tensor<8x8xbf16> {
    ^bb0(%x: bf16, %y: bf16):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.mulf %xf, %yf : f32
      ein.yield %m : f32
    }
    return %c : tensor<8x8xbf16>
  }
}

// -----

// Replicable weights arrive where every join block reads them (here each
// GPU needs all of w: one replica per GPU); nothing moves.
// CHECK-LABEL: func.func @weights
// CHECK: %[[W:.*]] = ein.partition %arg1 : tensor<16x8xf32> -> !ein.rel<16x8xf32, parts = [1, 1], replicas = 2, devices = [0, 1]>
// CHECK: ein.extract_block %[[W]] [0, 0] replica 0
// CHECK: ein.extract_block %[[W]] [0, 0] replica 1
// CHECK-NOT: ein.transfer
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @weights(%x: tensor<32x16xf32>, %w: tensor<16x8xf32> {ein.weight}) -> tensor<32x8xf32> {
    %y = ein.join_agg add ins(%x[d0, d1], %w[d1, d2] : tensor<32x16xf32>, tensor<16x8xf32>) out[d0, d2] : tensor<32x8xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      ein.yield %m : f32
    }
    return %y : tensor<32x8xf32>
  }
}

// -----

// GQA attention, 4 query heads on 2 KV heads, split by heads over 4 GPUs:
// each GPU computes one query head (group 1 in its block) and the KV head
// it shares is copied to its partner.
// CHECK-LABEL: func.func @gqa_heads
// CHECK: ein.transfer {{.*}} [0, 0, 0, 0] [1, 1, 64, 16] from 0 to 1
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, device = 0 : i64} : tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16> -> tensor<1x1x64x16xbf16>
// CHECK: ein.attention {{.*}} {causal, device = 3 : i64}
// CHECK: ein.from_blocks {{.*}} -> !ein.rel<1x4x64x16xbf16, parts = [1, 4, 1, 1], devices = [0, 1, 2, 3]>
module attributes {ein.target = #ein.target<devices = 4, chip = "sm_90">} {
  func.func @gqa_heads(%q: tensor<1x4x64x16xbf16>, %k: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x16xbf16>) -> tensor<1x4x64x16xbf16> {
    %o = ein.attention %q, %k, %v {causal, group = 2 : i64} : tensor<1x4x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16> -> tensor<1x4x64x16xbf16>
    return %o : tensor<1x4x64x16xbf16>
  }
}

// -----

// One head, a long sequence: the queries are cut over 2 GPUs (sm_90 keeps
// keys whole), so the second block's queries start at 2048 in the causal
// mask and it reads every key.
// CHECK-LABEL: func.func @tokens
// CHECK: ein.attention {{.*}} {causal, device = 0 : i64} : tensor<1x1x2048x16xbf16>, tensor<1x1x4096x16xbf16>
// CHECK: ein.attention {{.*}} {causal, device = 1 : i64, query_offset = 2048 : i64} : tensor<1x1x2048x16xbf16>, tensor<1x1x4096x16xbf16>
module attributes {ein.target = #ein.target<devices = 2, chip = "sm_90">} {
  func.func @tokens(%q: tensor<1x1x4096x16xbf16>, %k: tensor<1x1x4096x16xbf16>, %v: tensor<1x1x4096x16xbf16>) -> tensor<1x1x4096x16xbf16> {
    %o = ein.attention %q, %k, %v {causal} : tensor<1x1x4096x16xbf16>, tensor<1x1x4096x16xbf16>, tensor<1x1x4096x16xbf16> -> tensor<1x1x4096x16xbf16>
    return %o : tensor<1x1x4096x16xbf16>
  }
}

// -----

// One GPU: blocks are the whole tensors and nothing moves.
// CHECK-LABEL: func.func @one_gpu
// CHECK-NOT: ein.transfer
// CHECK: ein.join_agg add {{.*}} attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<8x8xf32>
module attributes {ein.target = #ein.target<devices = 1>} {
  func.func @one_gpu(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x8xf32>, tensor<8x8xf32>) out[d0, d2] : tensor<8x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<8x8xf32>
  }
}

// -----

// A concat of two halves, cut by rows over 2 GPUs: each output block is the
// matching rows of both inputs, placed side by side; no kernel runs.
// CHECK-LABEL: func.func @concat
// CHECK: %[[X:.*]] = ein.partition %arg0 : tensor<8x4xf32> -> !ein.rel<8x4xf32, parts = [2, 1], devices = [0, 1]>
// CHECK: %[[X0:.*]] = ein.extract_block %[[X]] [0, 0] replica 0
// CHECK: %[[Y:.*]] = ein.partition %arg1 : tensor<8x4xf32> -> !ein.rel<8x4xf32, parts = [2, 1], devices = [0, 1]>
// CHECK: %[[Y0:.*]] = ein.extract_block %[[Y]] [0, 0] replica 0
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[P:.*]] = tensor.insert_slice %[[X0]] into %[[E]][0, 0] [4, 4] [1, 1]
// CHECK: %[[Q:.*]] = tensor.insert_slice %[[Y0]] into %[[P]][0, 4] [4, 4] [1, 1]
// CHECK: ein.from_blocks %[[Q]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]>
// CHECK-NOT: ein.transfer
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @concat(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x8xf32> {
    %c = ein.concat dim 1 %x, %y : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
    return %c : tensor<8x8xf32>
  }
}

// -----

// The concat's output cut in 3 reads x as [0:4] and [4:6], not an even
// cut (a relation), and no later reader needs x: x and y arrive whole on
// GPU 0 and the exchanges bring GPUs 1 and 2 their parts.
// CHECK-LABEL: func.func @uneven_first_read
// CHECK-SAME: (%[[X:.*]]: tensor<6xf32>, %[[Y:.*]]: tensor<6xf32>)
// CHECK: %[[XR:.*]] = ein.partition %[[X]] : tensor<6xf32> -> !ein.rel<6xf32, parts = [1], devices = [0]>
// CHECK: %[[XB:.*]] = ein.extract_block %[[XR]] [0] replica 0
// CHECK: %[[YR:.*]] = ein.partition %[[Y]] : tensor<6xf32> -> !ein.rel<6xf32, parts = [1], devices = [0]>
// CHECK: %[[YB:.*]] = ein.extract_block %[[YR]] [0] replica 0
// CHECK: ein.transfer %[[XB]] [4] [2] from 0 to 1
// CHECK: ein.transfer %[[YB]] [0] [2] from 0 to 1
// CHECK: ein.transfer %[[YB]] [2] [4] from 0 to 2
// CHECK: ein.from_blocks {{.*}} -> !ein.rel<12xf32, parts = [3], devices = [0, 1, 2]>
module attributes {ein.target = #ein.target<devices = 3>} {
  func.func @uneven_first_read(%x: tensor<6xf32>, %y: tensor<6xf32>) -> tensor<12xf32> {
    %c = ein.concat dim 0 %x, %y : tensor<6xf32>, tensor<6xf32> -> tensor<12xf32>
    return %c : tensor<12xf32>
  }
}

// -----

// A non-causal attention cut by queries (one head: nothing else to cut):
// the blocks carry no offsets (they place a causal mask, and there is
// none).
// CHECK-LABEL: func.func @attention_by_queries
// CHECK: ein.attention {{.*}} {device = 0 : i64, scale = 1.250000e-01 : f64} : tensor<1x1x8x64xf32>
// CHECK: ein.attention {{.*}} {device = 1 : i64, scale = 1.250000e-01 : f64} : tensor<1x1x8x64xf32>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @attention_by_queries(%q: tensor<1x1x16x64xf32>, %k: tensor<1x1x16x64xf32>, %v: tensor<1x1x16x64xf32>) -> tensor<1x1x16x64xf32> {
    %o = ein.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32> -> tensor<1x1x16x64xf32>
    return %o : tensor<1x1x16x64xf32>
  }
}

// -----

// A depthwise convolution (4 groups of one channel, two features each) on
// 2 GPUs, cut by its groups: each block reads its two channels and filter
// columns, and is a depthwise convolution of 2 groups itself.
// CHECK-LABEL: func.func @depthwise_by_groups
// CHECK: %[[X:.*]] = ein.partition %arg0 : tensor<2x5x5x4xf32> -> !ein.rel<2x5x5x4xf32, parts = [1, 1, 1, 2], devices = [0, 1]>
// CHECK: %[[W:.*]] = ein.partition %arg1 : tensor<3x3x1x8xf32> -> !ein.rel<3x3x1x8xf32, parts = [1, 1, 1, 2], devices = [0, 1]>
// CHECK: ein.conv %{{.*}}, %{{.*}} {device = 0 : i64, dilations = array<i64: 1, 1>, groups = 2 : i64, layout = "nhwc", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<2x5x5x2xf32>, tensor<3x3x1x4xf32> -> tensor<2x3x3x4xf32>
// CHECK: ein.conv %{{.*}}, %{{.*}} {device = 1 : i64, dilations = array<i64: 1, 1>, groups = 2 : i64, layout = "nhwc", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<2x5x5x2xf32>, tensor<3x3x1x4xf32> -> tensor<2x3x3x4xf32>
// CHECK: ein.from_blocks {{.*}} -> !ein.rel<2x3x3x8xf32, parts = [1, 1, 1, 2], devices = [0, 1]>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @depthwise_by_groups(%x: tensor<2x5x5x4xf32>, %w: tensor<3x3x1x8xf32>) -> tensor<2x3x3x8xf32> {
    %c = ein.conv %x, %w {layout = "nhwc", groups = 4 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<2x5x5x4xf32>, tensor<3x3x1x8xf32> -> tensor<2x3x3x8xf32>
    return %c : tensor<2x3x3x8xf32>
  }
}

// -----

// Two groups on 4 GPUs, cut by groups and output rows: each block holds one
// group (no `groups` left) and the rows it computes, with its halo and the
// padding of its own edges.
// CHECK-LABEL: func.func @grouped_by_groups_and_rows
// CHECK: ein.conv %{{.*}}, %{{.*}} {device = 0 : i64, dilations = array<i64: 1, 1>, layout = "nchw", pad_high = array<i64: 0, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<1x2x3x4xf32>, tensor<8x2x3x3xf32> -> tensor<1x8x2x4xf32>
// CHECK: ein.conv %{{.*}}, %{{.*}} {device = 3 : i64, dilations = array<i64: 1, 1>, layout = "nchw", pad_high = array<i64: 1, 1>, pad_low = array<i64: 0, 1>, strides = array<i64: 1, 1>} : tensor<1x2x3x4xf32>, tensor<8x2x3x3xf32> -> tensor<1x8x2x4xf32>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @grouped_by_groups_and_rows(%x: tensor<1x4x4x4xf32>, %w: tensor<16x2x3x3xf32> {ein.weight}) -> tensor<1x16x4x4xf32> {
    %c = ein.conv %x, %w {layout = "nchw", groups = 2 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<1x4x4x4xf32>, tensor<16x2x3x3xf32> -> tensor<1x16x4x4xf32>
    return %c : tensor<1x16x4x4xf32>
  }
}
