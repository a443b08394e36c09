// The bundled LLaMA block is what the generator writes, and it verifies.
// RUN: %python %ein_src_root/examples/gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 1 --seq 16 | diff - %ein_src_root/examples/llama_block.mlir
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir -verify-roundtrip | FileCheck %s

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
