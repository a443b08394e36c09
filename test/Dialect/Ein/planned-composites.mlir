// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// Attention cut by KV head on 2 GPUs: each query block carries its KV
// head's group; nothing is replicated or partial.
// CHECK-LABEL: func.func @attention_by_heads
// CHECK: ein.attention {{.*}} {causal, group = 4 : i64, spec = #ein.spec<[1, 2, 1, 1, 1]>} : !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]> -> !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @attention_by_heads(%q: !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>, %k: !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>, %v: !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>) -> !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]> {
    %o = ein.attention %q, %k, %v {causal, group = 4 : i64, spec = #ein.spec<[1, 2, 1, 1, 1]>} : !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]> -> !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>
    return %o : !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>
  }
}

// -----

// Attention cut along its keys (a target that can combine key blocks): every
// query block is read by both halves and the result holds two online-softmax
// partials in f32.
// CHECK-LABEL: func.func @attention_by_keys
// CHECK-SAME: -> !ein.rel<1x4x16x8xf32, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax>
module attributes {ein.target = #ein.target<devices = 2, chip = "host">} {
  func.func @attention_by_keys(%q: !ein.rel<1x4x16x8xbf16, parts = [1, 1, 1, 1], replicas = 2>, %k: !ein.rel<1x4x16x8xbf16, parts = [1, 1, 2, 1]>) -> !ein.rel<1x4x16x8xf32, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax> {
    %o = ein.attention %q, %k, %k {spec = #ein.spec<[1, 1, 1, 1, 2]>} : !ein.rel<1x4x16x8xbf16, parts = [1, 1, 1, 1], replicas = 2>, !ein.rel<1x4x16x8xbf16, parts = [1, 1, 2, 1]>, !ein.rel<1x4x16x8xbf16, parts = [1, 1, 2, 1]> -> !ein.rel<1x4x16x8xf32, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax>
    return %o : !ein.rel<1x4x16x8xf32, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax>
  }
}

// -----

// Softmax and RMSNorm by rows; RMSNorm's weight is read by every row block.
// CHECK-LABEL: func.func @rows
// CHECK: ein.softmax %{{.*}} dim 1 {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>
// CHECK: ein.rms_norm %{{.*}}, %{{.*}} eps {{.*}} {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>, !ein.rel<16xf32, parts = [1], replicas = 4>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @rows(%x: !ein.rel<8x16xf32, parts = [4, 1]>, %w: !ein.rel<16xf32, parts = [1], replicas = 4>) -> !ein.rel<8x16xf32, parts = [4, 1]> {
    %s = ein.softmax %x dim 1 {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>
    %n = ein.rms_norm %s, %w eps 1.0e-5 {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>, !ein.rel<16xf32, parts = [1], replicas = 4>
    return %n : !ein.rel<8x16xf32, parts = [4, 1]>
  }
}

// -----

// LayerNorm by rows: its weight and bias are read by every row block.
// CHECK-LABEL: func.func @layer_norm_rows
// CHECK: ein.layer_norm %{{.*}} weight %{{.*}} bias %{{.*}} eps {{.*}} {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>, !ein.rel<16xf32, parts = [1], replicas = 4>, !ein.rel<16xf32, parts = [1], replicas = 4>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @layer_norm_rows(%x: !ein.rel<8x16xf32, parts = [4, 1]>, %w: !ein.rel<16xf32, parts = [1], replicas = 4>, %b: !ein.rel<16xf32, parts = [1], replicas = 4>) -> !ein.rel<8x16xf32, parts = [4, 1]> {
    %n = ein.layer_norm %x weight %w bias %b eps 1.0e-5 {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>, !ein.rel<16xf32, parts = [1], replicas = 4>, !ein.rel<16xf32, parts = [1], replicas = 4>
    return %n : !ein.rel<8x16xf32, parts = [4, 1]>
  }
}

// -----

// Touch ops: a slice and a concat read their inputs cut any way (blocks map
// by intersection); their results are cut by their specs.
// CHECK-LABEL: func.func @touch
// CHECK: ein.slice %{{.*}} [0, 4] [8, 4] {spec = #ein.spec<[2, 1]>} : !ein.rel<8x8xf32, parts = [1, 2]> -> !ein.rel<8x4xf32, parts = [2, 1]>
// CHECK: ein.concat dim 1 %{{.*}}, %{{.*}} {spec = #ein.spec<[1, 2]>} : !ein.rel<8x4xf32, parts = [2, 1]>, !ein.rel<8x4xf32, parts = [2, 1]> -> !ein.rel<8x8xf32, parts = [1, 2]>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @touch(%x: !ein.rel<8x8xf32, parts = [1, 2]>) -> !ein.rel<8x8xf32, parts = [1, 2]> {
    %s = ein.slice %x [0, 4] [8, 4] {spec = #ein.spec<[2, 1]>} : !ein.rel<8x8xf32, parts = [1, 2]> -> !ein.rel<8x4xf32, parts = [2, 1]>
    %c = ein.concat dim 1 %s, %s {spec = #ein.spec<[1, 2]>} : !ein.rel<8x4xf32, parts = [2, 1]>, !ein.rel<8x4xf32, parts = [2, 1]> -> !ein.rel<8x8xf32, parts = [1, 2]>
    return %c : !ein.rel<8x8xf32, parts = [1, 2]>
  }
}

// -----

// A convolution planned on 4 GPUs by output rows and input channels: its
// input is read by intersection (each block with its halo), the filter cut
// by input channels and copied to both row blocks, the result partial sums
// over the channel halves, in f32 for bf16.
// CHECK-LABEL: func.func @conv_by_rows_and_channels
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, layout = "nhwc", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, spec = #ein.spec<[1, 2, 1, 1, 2]>, strides = array<i64: 1, 1>} : !ein.rel<1x8x8x4xbf16, parts = [1, 1, 1, 1]>, !ein.rel<3x3x4x2xbf16, parts = [1, 1, 2, 1], replicas = 2> -> !ein.rel<1x8x8x2xf32, parts = [1, 2, 1, 1], replicas = 2, partial = add>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @conv_by_rows_and_channels(%x: !ein.rel<1x8x8x4xbf16, parts = [1, 1, 1, 1]>, %w: !ein.rel<3x3x4x2xbf16, parts = [1, 1, 2, 1], replicas = 2>) -> !ein.rel<1x8x8x2xf32, parts = [1, 2, 1, 1], replicas = 2, partial = add> {
    %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, spec = #ein.spec<[1, 2, 1, 1, 2]>} : !ein.rel<1x8x8x4xbf16, parts = [1, 1, 1, 1]>, !ein.rel<3x3x4x2xbf16, parts = [1, 1, 2, 1], replicas = 2> -> !ein.rel<1x8x8x2xf32, parts = [1, 2, 1, 1], replicas = 2, partial = add>
    return %c : !ein.rel<1x8x8x2xf32, parts = [1, 2, 1, 1], replicas = 2, partial = add>
  }
}

// -----

// Grouped convolutions planned by their groups (loops n, oh, ow, g, f, c):
// a depthwise one on 4 GPUs cut by `g`, and one of 2 groups on 4 GPUs cut
// by `g` and by `f` within each group. The filter's and the result's
// channels are cut as their `(g, f)` loops are, the input is read by
// intersection, and there are no partial sums.
// CHECK-LABEL: func.func @grouped_by_groups
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 8 : i64, layout = "nchw", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, spec = #ein.spec<[1, 1, 1, 4, 1, 1]>, strides = array<i64: 1, 1>} : !ein.rel<1x8x8x8xf32, parts = [1, 1, 1, 1]>, !ein.rel<8x1x3x3xf32, parts = [4, 1, 1, 1]> -> !ein.rel<1x8x8x8xf32, parts = [1, 4, 1, 1]>
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 2 : i64, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, spec = #ein.spec<[1, 1, 1, 2, 2, 1]>, strides = array<i64: 1, 1>} : !ein.rel<1x6x6x4xf32, parts = [1, 1, 1, 1]>, !ein.rel<3x3x2x8xf32, parts = [1, 1, 1, 4]> -> !ein.rel<1x4x4x8xf32, parts = [1, 1, 1, 4]>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @grouped_by_groups(%x: !ein.rel<1x8x8x8xf32, parts = [1, 1, 1, 1]>, %w: !ein.rel<8x1x3x3xf32, parts = [4, 1, 1, 1]>, %y: !ein.rel<1x6x6x4xf32, parts = [1, 1, 1, 1]>, %v: !ein.rel<3x3x2x8xf32, parts = [1, 1, 1, 4]>) -> (!ein.rel<1x8x8x8xf32, parts = [1, 4, 1, 1]>, !ein.rel<1x4x4x8xf32, parts = [1, 1, 1, 4]>) {
    %d = ein.conv %x, %w {layout = "nchw", groups = 8 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, spec = #ein.spec<[1, 1, 1, 4, 1, 1]>} : !ein.rel<1x8x8x8xf32, parts = [1, 1, 1, 1]>, !ein.rel<8x1x3x3xf32, parts = [4, 1, 1, 1]> -> !ein.rel<1x8x8x8xf32, parts = [1, 4, 1, 1]>
    %g = ein.conv %y, %v {layout = "nhwc", groups = 2 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, spec = #ein.spec<[1, 1, 1, 2, 2, 1]>} : !ein.rel<1x6x6x4xf32, parts = [1, 1, 1, 1]>, !ein.rel<3x3x2x8xf32, parts = [1, 1, 1, 4]> -> !ein.rel<1x4x4x8xf32, parts = [1, 1, 1, 4]>
    return %d, %g : !ein.rel<1x8x8x8xf32, parts = [1, 4, 1, 1]>, !ein.rel<1x4x4x8xf32, parts = [1, 1, 1, 4]>
  }
}
