// RUN: ein-opt %s -ein-decompose=remarks=true -verify-diagnostics -o /dev/null
// Machines described in JSON files: ein-decompose-topology-file.mlir.

// The simulated step reads the target's topology: the cube-mesh preset.
module attributes {ein.target = #ein.target<devices = 8, topology = "dgx1-v100">} {
  // expected-remark @+2 {{on dgx1-v100 with naive exchanges: 24 tasks, 48.0 KiB moved; busiest link}}
  // expected-remark @+1 {{plan total}}
  func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
    // expected-remark @+1 {{spec #ein.spec<[2, 2, 2]>: join 32.0 KiB, aggregation 16.0 KiB}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x64xf32>
  }
}
