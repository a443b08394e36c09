// The bundled matrix chain verifies and keeps its three contractions.
// RUN: ein-opt %ein_src_root/examples/matrix_chain.mlir -verify-roundtrip | FileCheck %s

// CHECK-LABEL: func.func @matrix_chain
// CHECK: %[[AB:.*]] = ein.join_agg add ins(%{{.*}}[d0, d1], %{{.*}}[d1, d2] : tensor<256x64xf32>, tensor<64x128xf32>) out[d0, d2] : tensor<256x128xf32>
// CHECK: %[[ABC:.*]] = ein.join_agg add ins(%[[AB]][d0, d1], %{{.*}}[d1, d2] : tensor<256x128xf32>, tensor<128x32xf32>) out[d0, d2] : tensor<256x32xf32>
// CHECK: %[[ABCD:.*]] = ein.join_agg add ins(%[[ABC]][d0, d1], %{{.*}}[d1, d2] : tensor<256x32xf32>, tensor<32x256xf32>) out[d0, d2] : tensor<256x256xf32>
// CHECK: return %[[ABCD]]
