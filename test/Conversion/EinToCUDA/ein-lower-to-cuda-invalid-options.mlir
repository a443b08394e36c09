// RUN: ein-opt %s --ein-lower-to-cuda=chip=sm_80 -verify-diagnostics
// RUN: not ein-opt %s --ein-lower-to-cuda=toolkit=%t/no-toolkit 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// TOOLKIT: error: no CUDA toolkit at '{{.*}}no-toolkit' ({{.*}}no-toolkit/bin/ptxas is missing): ein-lower-to-cuda compiles kernels with its ptxas and libdevice

// expected-error @+1 {{ein-lower-to-cuda chip=sm_80 differs from the #ein.target's chip sm_90; the bundle would name one and hold the other}}
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
