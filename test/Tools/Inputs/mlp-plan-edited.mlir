// The plan ein-opt --ein-plan writes for linalg_mlp.mlir on 2 devices,
// edited by hand: the second product cut by rows (its input moved from
// columns to rows by a repartition written in, its weight copied to both
// devices) instead of by its inner loop with partial sums
// (test/Tools/ein-compile-planned.test).
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @mlp(%arg0: tensor<12x20xf32>, %arg1: tensor<20x24xf32>, %arg2: tensor<24xf32>, %arg3: tensor<24x7xf32>) -> tensor<12x7xf32> {
    %0 = ein.partition %arg0 : tensor<12x20xf32> -> !ein.rel<12x20xf32, parts = [1, 1], replicas = 2>
    %1 = ein.partition %arg1 : tensor<20x24xf32> -> !ein.rel<20x24xf32, parts = [1, 2]>
    %2 = ein.join_agg add ins(%0[d0, d2], %1[d2, d1] : !ein.rel<12x20xf32, parts = [1, 1], replicas = 2>, !ein.rel<20x24xf32, parts = [1, 2]>) out[d0, d1] attributes {spec = #ein.spec<[1, 2, 1]>} : !ein.rel<12x24xf32, parts = [1, 2]> {
    ^bb0(%arg4: f32, %arg5: f32):
      %9 = arith.mulf %arg4, %arg5 : f32
      ein.yield %9 : f32
    }
    %3 = ein.partition %arg2 : tensor<24xf32> -> !ein.rel<24xf32, parts = [2]>
    %4 = ein.join_agg none ins(%2[d0, d1], %3[d1] : !ein.rel<12x24xf32, parts = [1, 2]>, !ein.rel<24xf32, parts = [2]>) out[d0, d1] attributes {spec = #ein.spec<[1, 2]>} : !ein.rel<12x24xf32, parts = [1, 2]> {
    ^bb0(%arg4: f32, %arg5: f32):
      %9 = arith.addf %arg4, %arg5 : f32
      %cst = arith.constant 0.000000e+00 : f32
      %10 = arith.maximumf %9, %cst : f32
      ein.yield %10 : f32
    }
    %5 = ein.partition %arg3 : tensor<24x7xf32> -> !ein.rel<24x7xf32, parts = [1, 1], replicas = 2>
    %rows = ein.repartition %4 : !ein.rel<12x24xf32, parts = [1, 2]> -> !ein.rel<12x24xf32, parts = [2, 1]>
    %6 = ein.join_agg add ins(%rows[d0, d2], %5[d2, d1] : !ein.rel<12x24xf32, parts = [2, 1]>, !ein.rel<24x7xf32, parts = [1, 1], replicas = 2>) out[d0, d1] attributes {spec = #ein.spec<[2, 1, 1]>} : !ein.rel<12x7xf32, parts = [2, 1]> {
    ^bb0(%arg4: f32, %arg5: f32):
      %9 = arith.mulf %arg4, %arg5 : f32
      ein.yield %9 : f32
    }
    %7 = ein.repartition %6 : !ein.rel<12x7xf32, parts = [2, 1]> -> !ein.rel<12x7xf32, parts = [1, 1]>
    %8 = ein.assemble %7 : !ein.rel<12x7xf32, parts = [1, 1]> -> tensor<12x7xf32>
    return %8 : tensor<12x7xf32>
  }
}

