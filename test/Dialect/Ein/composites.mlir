// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// CHECK-LABEL: func.func @gqa_causal
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, group = 4 : i64, scale = 1.250000e-01 : f64} : tensor<1x8x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x8x128x64xbf16>
func.func @gqa_causal(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x8x128x64xbf16> {
  %o = ein.attention %q, %k, %v {causal, group = 4 : i64, scale = 0.125 : f64} : tensor<1x8x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o : tensor<1x8x128x64xbf16>
}

// -----

// A token-split block of causal attention: its queries start at 64 in the
// sequence, its keys at 0; value_dim differs from head_dim.
// CHECK-LABEL: func.func @offset_block
// CHECK: ein.attention {{.*}} {causal, device = 1 : i64, query_offset = 64 : i64} : tensor<1x4x64x32xf16>, tensor<1x4x128x32xf16>, tensor<1x4x128x16xf16> -> tensor<1x4x64x16xf16>
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @offset_block(%q: tensor<1x4x64x32xf16>, %k: tensor<1x4x128x32xf16>, %v: tensor<1x4x128x16xf16>) -> tensor<1x4x64x16xf16> {
    %o = ein.attention %q, %k, %v {causal, query_offset = 64 : i64, device = 1 : i64} : tensor<1x4x64x32xf16>, tensor<1x4x128x32xf16>, tensor<1x4x128x16xf16> -> tensor<1x4x64x16xf16>
    return %o : tensor<1x4x64x16xf16>
  }
}

// -----

// Attention cut by KV head and by group on 4 GPUs.
// CHECK-LABEL: func.func @attention_spec
// CHECK: spec = #ein.spec<[1, 2, 2, 1, 1]>
module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @attention_spec(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
    %o = ein.attention %q, %k, %v {group = 4 : i64, spec = #ein.spec<[1, 2, 2, 1, 1]>} : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
    return %o : tensor<1x8x16x8xf32>
  }
}

// -----

// CHECK-LABEL: func.func @softmax_and_rms_norm
// CHECK: %[[S:.*]] = ein.softmax %{{.*}} dim 1 : tensor<4x128xf32>
// CHECK: ein.rms_norm %[[S]], %{{.*}} eps 9.9999999999999995E-7 : tensor<4x128xf32>, tensor<128xf32>
func.func @softmax_and_rms_norm(%x: tensor<4x128xf32>, %w: tensor<128xf32>) -> tensor<4x128xf32> {
  %s = ein.softmax %x dim 1 : tensor<4x128xf32>
  %n = ein.rms_norm %s, %w eps 1.0e-6 : tensor<4x128xf32>, tensor<128xf32>
  return %n : tensor<4x128xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norms
// CHECK: ein.layer_norm %{{.*}} weight %{{.*}} bias %{{.*}} eps 1.000000e-05 : tensor<4x128xbf16>, tensor<128xbf16>, tensor<128xbf16>
// CHECK: ein.layer_norm %{{.*}} weight %{{.*}} eps 1.000000e-05 : tensor<4x128xbf16>, tensor<128xbf16>
// CHECK: ein.layer_norm %{{.*}} eps 1.000000e-05 : tensor<4x128xbf16>
func.func @layer_norms(%x: tensor<4x128xbf16>, %w: tensor<128xbf16>, %b: tensor<128xbf16>) -> tensor<4x128xbf16> {
  %y = ein.layer_norm %x weight %w bias %b eps 1.0e-5 : tensor<4x128xbf16>, tensor<128xbf16>, tensor<128xbf16>
  %z = ein.layer_norm %y weight %w eps 1.0e-5 : tensor<4x128xbf16>, tensor<128xbf16>
  %u = ein.layer_norm %z eps 1.0e-5 : tensor<4x128xbf16>
  return %u : tensor<4x128xbf16>
}

// -----

// CHECK-LABEL: func.func @gathers
// CHECK: ein.gather %{{.*}}[%{{.*}}] : tensor<50x16xbf16>, tensor<2x8xi64> -> tensor<2x8x16xbf16>
// CHECK: ein.gather %{{.*}}[%{{.*}}] {row_offset = 25 : i64} : tensor<25x16xbf16>, tensor<4xi32> -> tensor<4x16xbf16>
func.func @gathers(%t: tensor<50x16xbf16>, %ids: tensor<2x8xi64>, %half: tensor<25x16xbf16>, %few: tensor<4xi32>) -> (tensor<2x8x16xbf16>, tensor<4x16xbf16>) {
  %a = ein.gather %t[%ids] : tensor<50x16xbf16>, tensor<2x8xi64> -> tensor<2x8x16xbf16>
  %b = ein.gather %half[%few] {row_offset = 25 : i64} : tensor<25x16xbf16>, tensor<4xi32> -> tensor<4x16xbf16>
  return %a, %b : tensor<2x8x16xbf16>, tensor<4x16xbf16>
}

// -----

// CHECK-LABEL: func.func @windows
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, layout = "nhwc", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<8x56x56x64xbf16>, tensor<3x3x64x128xbf16> -> tensor<8x28x28x128xbf16>
// CHECK: ein.pool max %{{.*}} {dilations = array<i64: 1, 1>, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : tensor<8x28x28x128xbf16> -> tensor<8x14x14x128xbf16>
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, layout = "nchw", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<2x3x13x11xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x9x7xf32>
// CHECK: ein.pool add %{{.*}} {dilations = array<i64: 1, 1>, layout = "nchw", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>, window = array<i64: 2, 2>} : tensor<2x4x9x7xf32> -> tensor<2x4x8x6xf32>
func.func @windows(%x: tensor<8x56x56x64xbf16>, %w: tensor<3x3x64x128xbf16>, %y: tensor<2x3x13x11xf32>, %v: tensor<4x3x3x3xf32>) -> (tensor<8x14x14x128xbf16>, tensor<2x4x8x6xf32>) {
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<8x56x56x64xbf16>, tensor<3x3x64x128xbf16> -> tensor<8x28x28x128xbf16>
  %p = ein.pool max %c {layout = "nhwc", window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 0, 0>} : tensor<8x28x28x128xbf16> -> tensor<8x14x14x128xbf16>
  %d = ein.conv %y, %v {layout = "nchw", strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<2x3x13x11xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x9x7xf32>
  %s = ein.pool add %d {layout = "nchw", window = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<2x4x9x7xf32> -> tensor<2x4x8x6xf32>
  return %p, %s : tensor<8x14x14x128xbf16>, tensor<2x4x8x6xf32>
}

// -----

// Grouped and depthwise convolutions carry `groups`; a group count of 1,
// written or not, is not printed.
// CHECK-LABEL: func.func @grouped_windows
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 4 : i64, layout = "nchw", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<2x8x6x6xf32>, tensor<12x2x3x3xf32> -> tensor<2x12x6x6xf32>
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, groups = 12 : i64, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x6x6x12xbf16>, tensor<3x3x1x24xbf16> -> tensor<2x2x2x24xbf16>
// CHECK: ein.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, layout = "nchw", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<2x12x6x6xf32>, tensor<3x12x1x1xf32> -> tensor<2x3x6x6xf32>
func.func @grouped_windows(%x: tensor<2x8x6x6xf32>, %w: tensor<12x2x3x3xf32>, %y: tensor<2x6x6x12xbf16>, %v: tensor<3x3x1x24xbf16>, %u: tensor<3x12x1x1xf32>) -> (tensor<2x3x6x6xf32>, tensor<2x2x2x24xbf16>) {
  %g = ein.conv %x, %w {layout = "nchw", groups = 4 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<2x8x6x6xf32>, tensor<12x2x3x3xf32> -> tensor<2x12x6x6xf32>
  %d = ein.conv %y, %v {layout = "nhwc", groups = 12 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pad_low = array<i64: 2, 2>, pad_high = array<i64: 0, 0>} : tensor<2x6x6x12xbf16>, tensor<3x3x1x24xbf16> -> tensor<2x2x2x24xbf16>
  %p = ein.conv %g, %u {layout = "nchw", groups = 1 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<2x12x6x6xf32>, tensor<3x12x1x1xf32> -> tensor<2x3x6x6xf32>
  return %p, %d : tensor<2x3x6x6xf32>, tensor<2x2x2x24xbf16>
}

// -----

// CHECK-LABEL: func.func @arg_reduces
// CHECK: ein.arg_reduce max %{{.*}} dim 1 : tensor<16x8xbf16> -> tensor<16xi64>
// CHECK: ein.arg_reduce min %{{.*}} dim 0 : tensor<16x8xbf16> -> tensor<8xi32>
func.func @arg_reduces(%x: tensor<16x8xbf16>) -> (tensor<16xi64>, tensor<8xi32>) {
  %a = ein.arg_reduce max %x dim 1 : tensor<16x8xbf16> -> tensor<16xi64>
  %b = ein.arg_reduce min %x dim 0 : tensor<16x8xbf16> -> tensor<8xi32>
  return %a, %b : tensor<16xi64>, tensor<8xi32>
}
