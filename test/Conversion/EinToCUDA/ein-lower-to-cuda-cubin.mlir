// REQUIRES: cuda-toolkit
// RUN: ein-opt %s --ein-lower-to-cuda | FileCheck %s

// With the toolkit the GPU module becomes one sm_90 cubin (an ELF image).
// CHECK: module @ein_kernels
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_0
// CHECK-NOT: gpu.module
// CHECK: gpu.binary @ein_device [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @relu(%x: tensor<64xbf16>) -> tensor<64xbf16> {
    %y = ein.join_agg none ins(%x[d0] : tensor<64xbf16>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<64xbf16> {
    ^bb0(%a: bf16):
      %w = arith.extf %a : bf16 to f32
      %z = arith.constant 0.0 : f32
      %r = arith.maximumf %w, %z : f32
      ein.yield %r : f32
    }
    return %y : tensor<64xbf16>
  }
}
