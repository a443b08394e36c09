// RUN: ein-opt %s -split-input-file --ein-lower-to-cuda=compile=false -o /dev/null 2>&1 | FileCheck %s
// RUN: ein-opt %s -split-input-file --ein-lower-to-cuda="compile=false remarks=none" -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=NONE
// RUN: not ein-opt %s -split-input-file --ein-lower-to-cuda="compile=false remarks=all" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// NONE-NOT: : remark:
// BAD: error: remarks must be missed or none, got 'all'

// A lost library route is not silent: an f32 attention (or one whose head
// dimension the fused attention does not take) runs as generated kernels
// with its scores in memory, and says so once for its two device blocks.
// CHECK: model.py:3:1: remark: attention runs as generated kernels, with its scores in memory, not as the fused attention: it is in f32 (the fused attention takes bf16 or f16)
// CHECK-NOT: model.py:3:1: remark
// CHECK: ein-lower-to-cuda-remarks.mlir:[[@LINE+15]]:10: remark: attention runs as generated kernels, with its scores in memory, not as the fused attention: its head dimension is 32 (the fused attention takes 64 or 128)
// CHECK: ein-lower-to-cuda-remarks.mlir:[[@LINE+25]]:10: remark: this product runs as a generated kernel, not a library gemm: it sums over 2 loops (a library gemm sums over one: collapse the contracted dimensions into one)
// CHECK-NOT: : remark:
module attributes {ein.target = #ein.target<devices = 2, chip = "sm_90">} {
  func.func @f32_attention(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) {
    %a = ein.attention %q, %k, %v {causal, device = 0 : i64} : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32> loc("model.py":3:1)
    %b = ein.attention %q, %k, %v {causal, device = 1 : i64} : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32> loc("model.py":3:1)
    return %a, %b : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @head_dim_32(%q: tensor<1x2x8x32xbf16>, %k: tensor<1x2x8x32xbf16>, %v: tensor<1x2x8x32xbf16>) -> tensor<1x2x8x32xbf16> {
    %a = ein.attention %q, %k, %v {device = 0 : i64} : tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16> -> tensor<1x2x8x32xbf16>
    return %a : tensor<1x2x8x32xbf16>
  }
}

// -----

// A product summed over two loops is not one gemm: it says so. A bf16
// attention of head dimension 64 and a plain product say nothing.
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @two_sums(%a: tensor<8x4x4xf32>, %b: tensor<4x4x8xf32>, %q: tensor<1x2x8x64xbf16>) -> (tensor<8x8xf32>, tensor<1x2x8x64xbf16>, tensor<8x8xf32>) {
    %c = ein.join_agg add ins(%a[d0, d2, d3], %b[d2, d3, d1] : tensor<8x4x4xf32>, tensor<4x4x8xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    %o = ein.attention %q, %q, %q {device = 0 : i64} : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xbf16>
    %s = ein.join_agg add ins(%c[d0, d2], %c[d2, d1] : tensor<8x8xf32>, tensor<8x8xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c, %o, %s : tensor<8x8xf32>, tensor<1x2x8x64xbf16>, tensor<8x8xf32>
  }
}
