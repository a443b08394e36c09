// When the state cap bites the plan is no longer provably optimal: the
// planner still answers, with the best plan its bounded search found and a
// warning bounding how far from the optimum it may be (allow-inexact, kept
// for older pipelines, changes nothing); with exact=true it fails instead.
// RUN: ein-opt %s -ein-decompose=state-cap=1 -verify-diagnostics | FileCheck %s
// RUN: ein-opt %s -ein-decompose="state-cap=1 allow-inexact=true" -verify-diagnostics | FileCheck %s
// RUN: not ein-opt %s -ein-decompose="state-cap=1 exact=true" 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: error: 'func.func' op the search kept only the 1 cheapest states at some step (it saw 6): the plan would not be provably optimal; raise state-cap (ein-compile --state-cap=N), or leave out exact=true (--exact) to keep the best plan found
// With room for every state there is no warning.
// RUN: ein-opt %s -ein-decompose 2>&1 | FileCheck %s --check-prefix=EXACT

// CHECK-COUNT-3: spec = #ein.spec
// EXACT-NOT: warning: the search
// EXACT: spec = #ein.spec
module attributes {ein.target = #ein.target<devices = 4>} {
  // expected-warning-re @+1 {{the search kept only the 1 cheapest states at some step (it saw 6): the plan may not be optimal: it costs {{[0-9]+\.[0-9] [KMGT]?i?B}}, no plan less than {{[0-9]+\.[0-9] [KMGT]?i?B}} (within {{[0-9]+\.[0-9]}}%); raise state-cap (ein-compile --state-cap=N) for a proven optimum}}
  func.func @dag(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %a = ein.join_agg add ins(%x[d0, d1], %w[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%p: f32, %q: f32):
      %m = arith.mulf %p, %q : f32
      ein.yield %m : f32
    }
    %b = ein.join_agg add ins(%x[d0, d1], %a[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%p: f32, %q: f32):
      %m = arith.mulf %p, %q : f32
      ein.yield %m : f32
    }
    %s = ein.join_agg none ins(%a[d0, d1], %b[d0, d1] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d1] : tensor<64x64xf32> {
    ^bb0(%p: f32, %q: f32):
      %m = arith.addf %p, %q : f32
      ein.yield %m : f32
    }
    return %s : tensor<64x64xf32>
  }
}
