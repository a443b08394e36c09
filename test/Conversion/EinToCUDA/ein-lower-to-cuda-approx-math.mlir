// RUN: ein-opt %s -split-input-file --ein-lower-to-cuda=compile=false | FileCheck %s
// RUN: ein-opt %s -split-input-file --ein-lower-to-cuda="compile=false approx-math=false" | FileCheck %s --check-prefix=EXACT

// A kernel whose results are all bf16 (SwiGLU's SiLU-gate) computes its f32
// exp and division approximately (`afn`: __nv_fast_expf and div.approx.f32
// after the NVVM lowering); its sine does not (the fast one is imprecise for
// large arguments). approx-math=false keeps every op exact.

// CHECK-LABEL: gpu.func @ein_kernel_0_0
// CHECK-COUNT-8: math.exp %{{.*}} fastmath<afn> : f32
// CHECK-NOT: math.exp
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @ein_kernel_1_0
// CHECK: math.sin %{{.*}} : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32
// EXACT-NOT: fastmath
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @swiglu(%g: tensor<4x64xbf16>, %u: tensor<4x64xbf16>) -> (tensor<4x64xbf16>, tensor<4x64xbf16>) {
    %y = ein.join_agg none ins(%g[d0, d1], %u[d0, d1] : tensor<4x64xbf16>, tensor<4x64xbf16>) out[d0, d1] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0>} : tensor<4x64xbf16> {
    ^bb0(%a: bf16, %b: bf16):
      %af = arith.extf %a : bf16 to f32
      %bf = arith.extf %b : bf16 to f32
      %one = arith.constant 1.0 : f32
      %n = arith.negf %af : f32
      %e = math.exp %n : f32
      %den = arith.addf %one, %e : f32
      %silu = arith.divf %af, %den : f32
      %r = arith.mulf %silu, %bf : f32
      ein.yield %r : f32
    }
    %z = ein.join_agg none ins(%g[d0, d1], %u[d0, d1] : tensor<4x64xbf16>, tensor<4x64xbf16>) out[d0, d1] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0>} : tensor<4x64xbf16> {
    ^bb0(%a: bf16, %b: bf16):
      %af = arith.extf %a : bf16 to f32
      %bf = arith.extf %b : bf16 to f32
      %s = math.sin %af : f32
      %q = arith.divf %s, %bf : f32
      ein.yield %q : f32
    }
    return %y, %z : tensor<4x64xbf16>, tensor<4x64xbf16>
  }
}

// -----

// The same map with an f32 result keeps IEEE division and the accurate exp.

// CHECK-LABEL: gpu.func @ein_kernel_0_0
// CHECK-NOT: fastmath
// CHECK: gpu.return
// EXACT-NOT: fastmath
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @swiglu_f32(%g: tensor<4x64xf32>, %u: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %y = ein.join_agg none ins(%g[d0, d1], %u[d0, d1] : tensor<4x64xf32>, tensor<4x64xf32>) out[d0, d1] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0>} : tensor<4x64xf32> {
    ^bb0(%a: f32, %b: f32):
      %one = arith.constant 1.0 : f32
      %n = arith.negf %a : f32
      %e = math.exp %n : f32
      %den = arith.addf %one, %e : f32
      %silu = arith.divf %a, %den : f32
      %r = arith.mulf %silu, %b : f32
      ein.yield %r : f32
    }
    return %y : tensor<4x64xf32>
  }
}

// -----

// A long bf16 row sum of exponentials goes through an f32 scratch: the
// kernel that adds the exponentials into it writes f32, so its exp stays
// exact although the block's result is bf16.

// CHECK-LABEL: gpu.func @ein_kernel_0_1
// CHECK-SAME: memref<4xf32>
// CHECK: math.exp
// CHECK-NOT: fastmath
// CHECK: gpu.return
// EXACT-NOT: fastmath
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @rows(%x: tensor<4x16xbf16>) -> tensor<4xbf16> {
    %s = ein.join_agg add ins(%x[d0, d1] : tensor<4x16xbf16>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0>} : tensor<4xbf16> {
    ^bb0(%a: bf16):
      %w = arith.extf %a : bf16 to f32
      %e = math.exp %w : f32
      ein.yield %e : f32
    }
    return %s : tensor<4xbf16>
  }
}
