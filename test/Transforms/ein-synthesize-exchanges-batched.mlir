// Batched transfers: on 8 GPUs over NVSwitch the example LLaMA block's
// attention gathers, on each GPU, a slice of every other GPU's K (after
// RoPE) and V blocks. Each GPU pair's two slices leave together, as one
// ein.transfer of two regions, and land in K and V respectively; the step
// simulates faster than the same program unbatched (PhysicalTest), and the
// lowered program computes what the original does. The naive form batches
// nothing, nor does batch-transfers=false.
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=8 topology=nvswitch" --ein-plan --ein-synthesize-exchanges="exchange=synthesized report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t.json
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=8 topology=nvswitch" --ein-plan --ein-synthesize-exchanges="exchange=naive report=%t.naive.json" | FileCheck %s --check-prefix=NAIVE
// RUN: FileCheck %s --check-prefix=NAIVE-REPORT --input-file=%t.naive.json
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=8 topology=nvswitch" --ein-plan --ein-synthesize-exchanges="exchange=synthesized batch-transfers=false" | FileCheck %s --check-prefix=NAIVE
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=8 topology=nvswitch" --ein-enumerate-specs --ein-decompose="remarks=true batch-transfers=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=8 topology=nvswitch" --ein-enumerate-specs --ein-decompose=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=ON
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-export-program=%t.want.json -o /dev/null
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=8 topology=nvswitch" --ein-plan --ein-synthesize-exchanges=exchange=synthesized --ein-export-program=%t.got.json -o /dev/null
// RUN: ein-eval %t.want.json --seed=2 | sed -e "s/'[^']*'//" > %t.want
// RUN: ein-eval %t.got.json --seed=2 | sed -e "s/'[^']*'//" > %t.got
// RUN: diff %t.want %t.got

// GPU 2's K block (RoPE'd, then reshaped) and its V block (transposed)
// leave for GPU 0 together, where the first of them is read.
// CHECK: %[[K:.*]] = ein.reshape {{.*}} {device = 2 : i64} : tensor<1x2x2x2x8xf32> -> tensor<1x2x2x16xf32>
// CHECK: %[[V:.*]] = ein.join_agg none ins(%{{.*}}[d0, d1, d2, d3] : tensor<1x2x2x16xf32>) out[d0, d2, d1, d3] attributes {device = 2 : i64
// CHECK: %[[KV:.*]]:2, %{{.*}} = ein.transfer %[[K]] [0, 0, 0, 0] [1, 1, 2, 16], %[[V]] [0, 0, 0, 0] [1, 1, 2, 16] from 2 to 0 : tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32> -> tensor<1x1x2x16xf32>, tensor<1x1x2x16xf32>
// CHECK: tensor.insert_slice %[[KV]]#0 into %{{.*}}[0, 0, 4, 0] [1, 1, 2, 16]
// CHECK: tensor.insert_slice %[[KV]]#1 into %{{.*}}[0, 0, 4, 0] [1, 1, 2, 16]
// CHECK: ein.attention {{.*}}device = 0 : i64

// REPORT: "batches": {{[1-9][0-9]*}},
// REPORT: "exchanges": [
// REPORT: "batch": 0,
// REPORT: "batch": 0,

// NAIVE-NOT: ], %{{.*}} from
// OFF: synthesized, 0 batched transfers)
// ON: synthesized, {{[1-9][0-9]*}} batched transfers)
// NAIVE-REPORT: "batches": 0,
// NAIVE-REPORT-NOT: "batch":
