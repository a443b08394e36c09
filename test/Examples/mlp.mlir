// The bundled MLP verifies: two weights, a ReLU and the residual add.
// RUN: ein-opt %ein_src_root/examples/mlp.mlir -verify-roundtrip | FileCheck %s

// Exported to program.json and evaluated by ein-eval, the result matches an
// independent NumPy implementation on the same inputs.
// RUN: ein-opt %ein_src_root/examples/mlp.mlir --ein-export-program=%t.json -o /dev/null
// RUN: ein-eval %t.json --seed=7 --save-inputs=%t.x.npy,%t.w1.npy,%t.w2.npy --outputs=%t.out.npy | FileCheck %s --check-prefix=EVAL
// RUN: %numpy_python %S/numpy_reference.py mlp --inputs=%t.x.npy,%t.w1.npy,%t.w2.npy --output=%t.out.npy | FileCheck %s --check-prefix=NUMPY
// EVAL: result 0 '{{v[0-9]+}}': 64x128 f32 max_abs=
// NUMPY: max_rel_err={{.*}} ok

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %{{.*}}: tensor<128x512xf32> {ein.weight}, %{{.*}}: tensor<512x128xf32> {ein.weight})
// CHECK: ein.join_agg add
// CHECK: arith.maximumf
// CHECK: ein.join_agg add
// CHECK: %[[Y:.*]] = ein.join_agg none ins(%[[X]][d0, d1], %{{.*}}[d0, d1] : tensor<64x128xf32>, tensor<64x128xf32>) out[d0, d1]
// CHECK: return %[[Y]]
