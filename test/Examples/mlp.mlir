// The bundled MLP verifies: two weights, a ReLU and the residual add.
// RUN: ein-opt %ein_src_root/examples/mlp.mlir -verify-roundtrip | FileCheck %s

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %{{.*}}: tensor<128x512xf32> {ein.weight}, %{{.*}}: tensor<512x128xf32> {ein.weight})
// CHECK: ein.join_agg add
// CHECK: arith.maximumf
// CHECK: ein.join_agg add
// CHECK: %[[Y:.*]] = ein.join_agg none ins(%[[X]][d0, d1], %{{.*}}[d0, d1] : tensor<64x128xf32>, tensor<64x128xf32>) out[d0, d1]
// CHECK: return %[[Y]]
