// The bundled LLaMA block is what the generator writes, and it verifies.
// RUN: %python %ein_src_root/examples/gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 1 --seq 16 | diff - %ein_src_root/examples/llama_block.mlir
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir -verify-roundtrip | FileCheck %s

// Exported to program.json and evaluated by ein-eval, the result matches an
// independent NumPy implementation on the same inputs.
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-export-program=%t.json -o /dev/null
// RUN: ein-eval %t.json --seed=7 --save-inputs=%t.x.npy,%t.norm1.npy,%t.wq.npy,%t.wk.npy,%t.wv.npy,%t.wo.npy,%t.norm2.npy,%t.wg.npy,%t.wu.npy,%t.wd.npy,%t.cos.npy,%t.sin.npy --outputs=%t.out.npy | FileCheck %s --check-prefix=EVAL
// RUN: %numpy_python %S/numpy_reference.py llama_block --inputs=%t.x.npy,%t.norm1.npy,%t.wq.npy,%t.wk.npy,%t.wv.npy,%t.wo.npy,%t.norm2.npy,%t.wg.npy,%t.wu.npy,%t.wd.npy,%t.cos.npy,%t.sin.npy --output=%t.out.npy | FileCheck %s --check-prefix=NUMPY
// EVAL: result 0 '{{v[0-9]+}}': 1x16x64 f32 max_abs=
// NUMPY: max_rel_err={{.*}} ok

// CHECK-LABEL: func.func @llama_block
// CHECK-COUNT-11: {ein.weight}
// CHECK: ein.rms_norm %{{.*}}, %{{.*}} eps 1.000000e-05 : tensor<1x16x64xf32>, tensor<64xf32>
// RoPE rotates halves of each head with the slices and a concat.
// CHECK: ein.slice %{{.*}} [0, 0, 0, 0] [1, 4, 16, 8]
// CHECK: ein.concat dim 3
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, group = 2 : i64} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x16x16xf32>
// CHECK: ein.reshape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
// CHECK: ein.rms_norm
// SwiGLU: silu(gate) * up.
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: return
