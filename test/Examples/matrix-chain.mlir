// The bundled matrix chain verifies and keeps its three contractions.
// RUN: ein-opt %ein_src_root/examples/matrix_chain.mlir -verify-roundtrip | FileCheck %s

// Exported to program.json and evaluated by ein-eval, the result matches an
// independent NumPy implementation on the same inputs.
// RUN: ein-opt %ein_src_root/examples/matrix_chain.mlir --ein-export-program=%t.json -o /dev/null
// RUN: ein-eval %t.json --seed=7 --save-inputs=%t.a.npy,%t.b.npy,%t.c.npy,%t.d.npy --outputs=%t.out.npy | FileCheck %s --check-prefix=EVAL
// RUN: %numpy_python %S/numpy_reference.py matrix_chain --inputs=%t.a.npy,%t.b.npy,%t.c.npy,%t.d.npy --output=%t.out.npy | FileCheck %s --check-prefix=NUMPY
// EVAL: result 0 '{{v[0-9]+}}': 256x256 f32 max_abs=
// NUMPY: max_rel_err={{.*}} ok

// CHECK-LABEL: func.func @matrix_chain
// CHECK: %[[AB:.*]] = ein.join_agg add ins(%{{.*}}[d0, d1], %{{.*}}[d1, d2] : tensor<256x64xf32>, tensor<64x128xf32>) out[d0, d2] : tensor<256x128xf32>
// CHECK: %[[ABC:.*]] = ein.join_agg add ins(%[[AB]][d0, d1], %{{.*}}[d1, d2] : tensor<256x128xf32>, tensor<128x32xf32>) out[d0, d2] : tensor<256x32xf32>
// CHECK: %[[ABCD:.*]] = ein.join_agg add ins(%[[ABC]][d0, d1], %{{.*}}[d1, d2] : tensor<256x32xf32>, tensor<32x256xf32>) out[d0, d2] : tensor<256x256xf32>
// CHECK: return %[[ABCD]]
