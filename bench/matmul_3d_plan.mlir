// The 3-D matmul on 8 devices, as planned (the README's example at 256 x 128 x
// 192; bench/check_logical_devices.sh): each input block read by two join
// blocks, each output block two partial sums, summed by ein.repartition.
module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @matmul_3d(%arg0: tensor<256x128xf32>, %arg1: tensor<128x192xf32>) -> tensor<256x192xf32> {
    %0 = ein.partition %arg0 : tensor<256x128xf32> -> !ein.rel<256x128xf32, parts = [2, 2], replicas = 2>
    %1 = ein.partition %arg1 : tensor<128x192xf32> -> !ein.rel<128x192xf32, parts = [2, 2], replicas = 2>
    %2 = ein.join_agg add ins(%0[d0, d1], %1[d1, d2] : !ein.rel<256x128xf32, parts = [2, 2], replicas = 2>, !ein.rel<128x192xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<256x192xf32, parts = [2, 2], replicas = 2, partial = add> {
    ^bb0(%arg2: f32, %arg3: f32):
      %4 = arith.mulf %arg2, %arg3 : f32
      ein.yield %4 : f32
    }
    %3 = ein.repartition %2 : !ein.rel<256x192xf32, parts = [2, 2], replicas = 2, partial = add> -> !ein.rel<256x192xf32, parts = [2, 2]>
    %5 = ein.assemble %3 : !ein.rel<256x192xf32, parts = [2, 2]> -> tensor<256x192xf32>
    return %5 : tensor<256x192xf32>
  }
}
