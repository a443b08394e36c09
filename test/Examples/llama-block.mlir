// The bundled LLaMA block is what the generator writes, and it verifies.
// RUN: %python %ein_src_root/examples/gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 1 --seq 16 | diff - %ein_src_root/examples/llama_block.mlir
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir -verify-roundtrip | FileCheck %s

// Exported to program.json and evaluated by ein-eval, the result matches an
// independent NumPy implementation on the same inputs.
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-export-program=%t.json -o /dev/null
// RUN: ein-eval %t.json --seed=7 --save-inputs=%t.x.npy,%t.norm1.npy,%t.wq.npy,%t.wk.npy,%t.wv.npy,%t.wo.npy,%t.norm2.npy,%t.wg.npy,%t.wu.npy,%t.wd.npy,%t.rope.npy --outputs=%t.out.npy | FileCheck %s --check-prefix=EVAL
// RUN: %numpy_python %S/numpy_reference.py llama_block --inputs=%t.x.npy,%t.norm1.npy,%t.wq.npy,%t.wk.npy,%t.wv.npy,%t.wo.npy,%t.norm2.npy,%t.wg.npy,%t.wu.npy,%t.wd.npy,%t.rope.npy --output=%t.out.npy | FileCheck %s --check-prefix=NUMPY
// EVAL: result 0 '{{v[0-9]+}}': 1x16x64 f32 max_abs=
// NUMPY: max_rel_err={{.*}} ok

// The rotate-half form of RoPE (slices, cos and sin joins, a concat) gives
// the same block: checked against NumPy too.
// RUN: %python %ein_src_root/examples/gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 1 --seq 16 --rope halves > %t.halves.mlir
// RUN: ein-opt %t.halves.mlir | FileCheck %s --check-prefix=HALVES
// RUN: ein-opt %t.halves.mlir --ein-export-program=%t.halves.json -o /dev/null
// RUN: ein-eval %t.halves.json --seed=7 --save-inputs=%t.x.npy,%t.norm1.npy,%t.wq.npy,%t.wk.npy,%t.wv.npy,%t.wo.npy,%t.norm2.npy,%t.wg.npy,%t.wu.npy,%t.wd.npy,%t.cos.npy,%t.sin.npy --outputs=%t.halves.out.npy
// RUN: %numpy_python %S/numpy_reference.py llama_block --inputs=%t.x.npy,%t.norm1.npy,%t.wq.npy,%t.wk.npy,%t.wv.npy,%t.wo.npy,%t.norm2.npy,%t.wg.npy,%t.wu.npy,%t.wd.npy,%t.cos.npy,%t.sin.npy --output=%t.halves.out.npy | FileCheck %s --check-prefix=NUMPY
// HALVES: ein.slice %{{.*}} [0, 0, 0, 0] [1, 4, 16, 8]
// HALVES: ein.concat dim 3

// CHECK-LABEL: func.func @llama_block
// CHECK-COUNT-10: {ein.weight}
// CHECK: ein.rms_norm %{{.*}}, %{{.*}} eps 1.000000e-05 : tensor<1x16x64xf32>, tensor<64xf32>
// RoPE rotates each head's (2, d/2) pairs by the per-position 2x2 table.
// CHECK: %[[PAIRS:.*]] = ein.reshape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] : tensor<1x4x16x16xf32> -> tensor<1x4x16x2x8xf32>
// CHECK: ein.join_agg add ins(%arg10[d3, d5, d2, d4], %[[PAIRS]][d0, d1, d2, d5, d4] : tensor<2x2x16x8xf32>, tensor<1x4x16x2x8xf32>) out[d0, d1, d2, d3, d4]
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, group = 2 : i64} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x16x16xf32>
// CHECK: ein.reshape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
// CHECK: ein.rms_norm
// SwiGLU: silu(gate) * up.
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: return
