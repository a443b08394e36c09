// RUN: ein-opt %s --ein-lower-to-cpu=lower-to-llvm=false -verify-diagnostics -o /dev/null
// RUN: ein-opt %s --ein-lower-to-cpu="lower-to-llvm=false remarks=none" -o /dev/null 2>&1 | FileCheck %s --allow-empty
// RUN: not ein-opt %s --ein-lower-to-cpu="remarks=all" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// CHECK-NOT: : remark:
// BAD: error: remarks must be missed or none, got 'all'

// On the CPU every attention is a library step; a product summed over two
// loops is not one gemm, and says so. A plain product says nothing.
module attributes {ein.target = #ein.target<devices = 1>} {
  func.func @two_sums(%a: tensor<8x4x4xf32>, %b: tensor<4x4x8xf32>, %q: tensor<1x2x8x16xf32>) -> (tensor<8x8xf32>, tensor<1x2x8x16xf32>, tensor<8x8xf32>) {
    // expected-remark @+1 {{this product runs as a generated kernel, not a library gemm: it sums over 2 loops (a library gemm sums over one: collapse the contracted dimensions into one)}}
    %c = ein.join_agg add ins(%a[d0, d2, d3], %b[d2, d3, d1] : tensor<8x4x4xf32>, tensor<4x4x8xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    %o = ein.attention %q, %q, %q {device = 0 : i64} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    %s = ein.join_agg add ins(%c[d0, d2], %c[d2, d1] : tensor<8x8xf32>, tensor<8x8xf32>) out[d0, d1] attributes {device = 0 : i64} : tensor<8x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c, %o, %s : tensor<8x8xf32>, tensor<1x2x8x16xf32>, tensor<8x8xf32>
  }
}
