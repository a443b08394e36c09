// RUN: ein-opt %s -split-input-file -ein-synthesize-exchanges -verify-diagnostics
// RUN: ein-opt %S/Inputs/needs-plan.mlir -split-input-file -ein-plan -ein-synthesize-exchanges -verify-diagnostics

// The pass lowers the planned form: an op without a spec has no plan.
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @unplanned(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{has no spec; ein-synthesize-exchanges lowers the planned form (run ein-plan first)}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x8xf32>, tensor<8x8xf32>) out[d0, d2] : tensor<8x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<8x8xf32>
  }
}

// -----

// expected-error @+1 {{ein-synthesize-exchanges needs the module's #ein.target}}
module {
  func.func @no_target(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}

// -----

// Attention cut along its keys (the host target's kernels allow it) would
// need the log-sum-exp to combine its partial results.
module attributes {ein.target = #ein.target<devices = 4, chip = "host">} {
  func.func @keys(%q: !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2>, %k: !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2>, %v: !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2>) -> !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2, partial = online_softmax> {
    // expected-error @+1 {{is cut along its keys (spec #ein.spec<[1, 1, 1, 2, 2]>); combining its partial results needs the log-sum-exp of the attention kernel}}
    %o = ein.attention %q, %k, %v {spec = #ein.spec<[1, 1, 1, 2, 2]>} : !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2>, !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2>, !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2> -> !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2, partial = online_softmax>
    return %o : !ein.rel<1x1x4096x16xf32, parts = [1, 1, 2, 1], replicas = 2, partial = online_softmax>
  }
}
