// RUN: sed -e 's|@INPUTS@|%S/Inputs|' -e 's|@EXAMPLES@|%ein_src_root/examples|' %s | ein-opt -split-input-file -ein-decompose=remarks=true -verify-diagnostics -o /dev/null

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

// -----

// A measured machine described in JSON: two GPUs, 100 GB/s each way, 10 us a
// transfer. The (2, 1, 1) cut sends B's one extra copy, 64 x 64 x 4 B =
// 16 KiB.
module attributes {ein.target = #ein.target<devices = 2, topology = "@INPUTS@/two-gpus.json">} {
  // expected-remark @+2 {{simulated step 0.011 ms on measured-pair with naive exchanges: 3 tasks, 16.0 KiB moved; busiest link gpu0->gpu1}}
  // expected-remark @+1 {{plan total}}
  func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
    // expected-remark @+1 {{spec #ein.spec<[2, 1, 1]>: join 16.0 KiB}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x64xf32>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2, topology = "@INPUTS@/absent.json">} {
  // expected-remark @+2 {{plan total}}
  // expected-error @+1 {{cannot simulate the plan: cannot open topology file}}
  func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
    // expected-remark @+1 {{spec}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x64xf32>
  }
}

// -----

// The topology bench/probe_topology.py measured on the 2 x H200 machine
// (examples/topologies/h200x2-measured.json) loads and prices the plan.
module attributes {ein.target = #ein.target<devices = 2, topology = "@EXAMPLES@/topologies/h200x2-measured.json">} {
  // expected-remark @+2 {{on h200x2-measured with naive exchanges: 3 tasks, 16.0 KiB moved}}
  // expected-remark @+1 {{plan total}}
  func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
    // expected-remark @+1 {{spec #ein.spec<[2, 1, 1]>}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x64xf32>
  }
}
