// An embedding lookup planned by hand as vocabulary-parallel on 3 devices:
// the table's 100 rows cut 34/33/33, the indices copied to every device,
// each device's lookup 0 outside its rows, the partials added
// (test/Tools/ein-compile-gather.test).
module attributes {ein.target = #ein.target<devices = 3>} {
  func.func @emb(%arg0: tensor<100x32xf32> {ein.weight}, %arg1: tensor<2x8xi64>) -> tensor<2x8x32xf32> {
    %0 = ein.partition %arg0 : tensor<100x32xf32> -> !ein.rel<100x32xf32, parts = [3, 1]>
    %1 = ein.partition %arg1 : tensor<2x8xi64> -> !ein.rel<2x8xi64, parts = [1, 1], replicas = 3>
    %2 = ein.gather %0[%1] {spec = #ein.spec<[1, 1, 3, 1]>} : !ein.rel<100x32xf32, parts = [3, 1]>, !ein.rel<2x8xi64, parts = [1, 1], replicas = 3> -> !ein.rel<2x8x32xf32, parts = [1, 1, 1], replicas = 3, partial = add>
    %3 = ein.repartition %2 : !ein.rel<2x8x32xf32, parts = [1, 1, 1], replicas = 3, partial = add> -> !ein.rel<2x8x32xf32, parts = [1, 1, 1]>
    %4 = ein.assemble %3 : !ein.rel<2x8x32xf32, parts = [1, 1, 1]> -> tensor<2x8x32xf32>
    return %4 : tensor<2x8x32xf32>
  }
}
