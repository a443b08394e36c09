// RUN: ein-opt %s -split-input-file --ein-fold-attention-views=target=cuda | FileCheck %s
// RUN: ein-opt %s -split-input-file --ein-fold-attention-views=target=cpu | FileCheck %s --check-prefix=CPU
// RUN: not ein-opt %s -split-input-file --ein-fold-attention-views=target=tpu 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: target: {{.*}}tpu

// GPT-2's attention as ein-fuse-blocks leaves it (batch 2, 16 tokens, 2
// heads of 64): the QKV projection's result [2, 16, 384] sliced into q, k
// and v, each split into heads and transposed to [b, h, s, d], and the
// result transposed back to [b, s, h, d]. Every operand becomes one view of
// the projection (offset 0, 128, 256; strides over 16 x 384 elements
// per batch, 64 per head, 384 per token), the result one view the attention
// step writes; the slices, reshapes and transposes are gone.

// CHECK-LABEL: func.func @gpt2
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x16x384xbf16>)
// CHECK-NEXT: %[[Q:.*]] = ein.view %[[QKV]] offset 0 strides [6144, 64, 384, 1] : tensor<2x16x384xbf16> -> tensor<2x2x16x64xbf16>
// CHECK-NEXT: %[[K:.*]] = ein.view %[[QKV]] offset 128 strides [6144, 64, 384, 1] : tensor<2x16x384xbf16> -> tensor<2x2x16x64xbf16>
// CHECK-NEXT: %[[V:.*]] = ein.view %[[QKV]] offset 256 strides [6144, 64, 384, 1] : tensor<2x16x384xbf16> -> tensor<2x2x16x64xbf16>
// CHECK-NEXT: %[[O:.*]] = ein.attention %[[Q]], %[[K]], %[[V]]
// CHECK-NEXT: %[[T:.*]] = ein.view %[[O]] offset 0 strides [2048, 64, 1024, 1] : tensor<2x2x16x64xbf16> -> tensor<2x16x2x64xbf16>
// CHECK-NEXT: %[[R:.*]] = ein.reshape %[[T]]
// CHECK-NEXT: return %[[R]]
// CPU-LABEL: func.func @gpt2
// CPU-COUNT-4: ein.view
// CPU-NOT: tensor.extract_slice
func.func @gpt2(%qkv: tensor<2x16x384xbf16>) -> tensor<2x16x128xbf16> {
  %qs = tensor.extract_slice %qkv[0, 0, 0] [2, 16, 128] [1, 1, 1] : tensor<2x16x384xbf16> to tensor<2x16x128xbf16>
  %ks = tensor.extract_slice %qkv[0, 0, 128] [2, 16, 128] [1, 1, 1] : tensor<2x16x384xbf16> to tensor<2x16x128xbf16>
  %vs = tensor.extract_slice %qkv[0, 0, 256] [2, 16, 128] [1, 1, 1] : tensor<2x16x384xbf16> to tensor<2x16x128xbf16>
  %qh = ein.reshape %qs [[0], [1], [2, 3]] {device = 0 : i64} : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %kh = ein.reshape %ks [[0], [1], [2, 3]] {device = 0 : i64} : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %vh = ein.reshape %vs [[0], [1], [2, 3]] {device = 0 : i64} : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %q = ein.join_agg none ins(%qh[d0, d2, d1, d3] : tensor<2x16x2x64xbf16>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<2x2x16x64xbf16> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %k = ein.join_agg none ins(%kh[d0, d2, d1, d3] : tensor<2x16x2x64xbf16>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<2x2x16x64xbf16> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %v = ein.join_agg none ins(%vh[d0, d2, d1, d3] : tensor<2x16x2x64xbf16>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<2x2x16x64xbf16> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %o = ein.attention %q, %k, %v {causal, device = 0 : i64, scale = 0.125 : f64} : tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16> -> tensor<2x2x16x64xbf16>
  %t = ein.join_agg none ins(%o[d0, d2, d1, d3] : tensor<2x2x16x64xbf16>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<2x16x2x64xbf16> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %r = ein.reshape %t [[0], [1], [2, 3]] {device = 0 : i64} : tensor<2x16x2x64xbf16> -> tensor<2x16x128xbf16>
  return %r : tensor<2x16x128xbf16>
}

// -----

// In f32 with a head dimension of 32 the CUDA target runs attention as a
// generated kernel, which reads dense operands: nothing folds there. The
// CPU target's attention step takes views. A transpose that scales (not a
// copy) and one whose result is also returned are kept; the second is read
// through a view all the same (the copy stays for its other reader). The
// result, read twice, is written dense.

// CHECK-LABEL: func.func @kept
// CHECK-NOT: ein.view
// CHECK: ein.attention
// CHECK-NOT: ein.view
// CPU-LABEL: func.func @kept
// CPU-SAME: (%{{.*}}: tensor<1x4x64xf32>, %[[Y:.*]]: tensor<1x4x64xf32>)
// CPU: %[[Q:.*]] = ein.join_agg none
// CPU: arith.mulf
// CPU: %[[K:.*]] = ein.join_agg none
// CPU: %[[KV:.*]] = ein.view %[[Y]] offset 0 strides [64, 32, 64, 1]
// CPU: %[[O:.*]] = ein.attention %[[Q]], %[[KV]], %[[KV]]
// CPU-NOT: ein.view
// CPU: return %[[O]], %[[O]], %[[K]]
func.func @kept(%x: tensor<1x4x64xf32>, %y: tensor<1x4x64xf32>) -> (tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>) {
  %xh = ein.reshape %x [[0], [1], [2, 3]] {device = 0 : i64} : tensor<1x4x64xf32> -> tensor<1x4x2x32xf32>
  %yh = ein.reshape %y [[0], [1], [2, 3]] {device = 0 : i64} : tensor<1x4x64xf32> -> tensor<1x4x2x32xf32>
  %q = ein.join_agg none ins(%xh[d0, d2, d1, d3] : tensor<1x4x2x32xf32>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<1x2x4x32xf32> {
  ^bb0(%a: f32):
    %c = arith.constant 2.0 : f32
    %s = arith.mulf %a, %c : f32
    ein.yield %s : f32
  }
  %k = ein.join_agg none ins(%yh[d0, d2, d1, d3] : tensor<1x4x2x32xf32>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<1x2x4x32xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %o = ein.attention %q, %k, %k {device = 0 : i64} : tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32> -> tensor<1x2x4x32xf32>
  return %o, %o, %k : tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>
}

// -----

// Chains a view cannot describe stay copies: a strided slice, a collapse
// of dimensions a transpose made non-contiguous (the view would start after
// it, and would copy nothing more); and one that copies nothing (reshapes
// alone) needs no view.

// CHECK-LABEL: func.func @not_views
// CHECK-NOT: ein.view
// CHECK: tensor.extract_slice
// CHECK: ein.reshape
// CHECK: %[[Q:.*]] = ein.reshape
// CHECK: %[[T:.*]] = ein.join_agg
// CHECK: %[[K:.*]] = ein.reshape %[[T]]
// CHECK: ein.reshape
// CHECK: %[[V:.*]] = ein.reshape
// CHECK: ein.attention %[[Q]], %[[K]], %[[V]]
// CPU-LABEL: func.func @not_views
// CPU-NOT: ein.view
func.func @not_views(%x: tensor<1x4x16x128xbf16>, %y: tensor<1x2x8x2x64xbf16>, %z: tensor<2x2x8x64xbf16>) -> tensor<1x4x8x64xbf16> {
  %q = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 8, 64] [1, 1, 2, 2] : tensor<1x4x16x128xbf16> to tensor<1x4x8x64xbf16>
  %qq = ein.reshape %q [[0], [1, 2], [3], [4]] {device = 0 : i64} : tensor<1x4x8x64xbf16> -> tensor<1x4x1x8x64xbf16>
  %qc = ein.reshape %qq [[0], [1, 2], [3], [4]] {device = 0 : i64} : tensor<1x4x1x8x64xbf16> -> tensor<1x4x8x64xbf16>
  %t = ein.join_agg none ins(%y[d0, d1, d2, d3, d4] : tensor<1x2x8x2x64xbf16>) out[d0, d1, d3, d2, d4] attributes {device = 0 : i64} : tensor<1x2x2x8x64xbf16> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %k = ein.reshape %t [[0], [1, 2], [3], [4]] {device = 0 : i64} : tensor<1x2x2x8x64xbf16> -> tensor<1x4x8x64xbf16>
  %v = ein.reshape %z [[0, 1], [2], [3]] {device = 0 : i64} : tensor<2x2x8x64xbf16> -> tensor<4x8x64xbf16>
  %vv = ein.reshape %v [[0, 1], [2], [3]] {device = 0 : i64} : tensor<4x8x64xbf16> -> tensor<1x4x8x64xbf16>
  %o = ein.attention %qc, %k, %vv {device = 0 : i64} : tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16> -> tensor<1x4x8x64xbf16>
  return %o : tensor<1x4x8x64xbf16>
}

// -----

// One chain inside another: k is a slice of a projection split into heads,
// q the same block transposed. Both become views of the projection, and
// every copy goes (the pass never looks at a copy it erased).

// CPU-LABEL: func.func @nested
// CPU-SAME: (%[[P:.*]]: tensor<1x8x256xf32>)
// CPU-NEXT: %[[Q:.*]] = ein.view %[[P]] offset 0 strides [2048, 256, 64, 1] : tensor<1x8x256xf32> -> tensor<1x8x2x64xf32>
// CPU-NEXT: %[[K:.*]] = ein.view %[[P]] offset 0 strides [128, 64, 256, 1] : tensor<1x8x256xf32> -> tensor<1x2x8x64xf32>
// CPU-NEXT: ein.attention %[[Q]], %[[K]], %[[K]]
// CPU-NEXT: return
func.func @nested(%p: tensor<1x8x256xf32>) -> tensor<1x8x2x64xf32> {
  %s = tensor.extract_slice %p[0, 0, 0] [1, 8, 128] [1, 1, 1] : tensor<1x8x256xf32> to tensor<1x8x128xf32>
  %h = ein.reshape %s [[0], [1], [2, 3]] {device = 0 : i64} : tensor<1x8x128xf32> -> tensor<1x8x2x64xf32>
  %k = ein.join_agg none ins(%h[d0, d2, d1, d3] : tensor<1x8x2x64xf32>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<1x2x8x64xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %q = ein.join_agg none ins(%k[d0, d2, d1, d3] : tensor<1x2x8x64xf32>) out[d0, d1, d2, d3] attributes {device = 0 : i64} : tensor<1x8x2x64xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %o = ein.attention %q, %k, %k {device = 0 : i64, group = 4 : i64} : tensor<1x8x2x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x8x2x64xf32>
  return %o : tensor<1x8x2x64xf32>
}
