// The ein-plan pipeline takes the bundled LLaMA block to a verified planned
// program on 8 GPUs, and its stages replay it step by step.
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target=devices=8 --ein-plan --verify-each -o %t.plan.mlir
// RUN: FileCheck %s --input-file=%t.plan.mlir
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target=devices=8 --ein-enumerate-specs --ein-decompose --ein-insert-exchanges -o %t.stages.mlir
// RUN: cmp %t.plan.mlir %t.stages.mlir

// CHECK-LABEL: func.func @llama_block
// CHECK-SAME: -> tensor<1x16x64xf32>
// CHECK: ein.partition %arg0 : tensor<1x16x64xf32> -> !ein.rel<1x16x64xf32, parts = [1, 8, 1]>
// CHECK: ein.rms_norm {{.*}}spec = #ein.spec<[1, 8, 1]>{{.*}} : !ein.rel<1x16x64xf32, parts = [1, 8, 1]>, !ein.rel<64xf32, parts = [1], replicas = 8>
// CHECK: ein.attention {{.*}}spec = #ein.spec<[1, 2, 2, 2, 1]>{{.*}} -> !ein.rel<1x4x16x16xf32, parts = [1, 4, 2, 1]>
// CHECK: ein.repartition
// CHECK: %[[OUT:.*]] = ein.assemble %{{.*}} : !ein.rel<1x16x64xf32, parts = [1, 8, 1]> -> tensor<1x16x64xf32>
// CHECK: return %[[OUT]]
// CHECK-NOT: ein.candidates

// On one GPU the plan is the program itself: one block, no repartition.
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target=devices=1 --ein-plan | FileCheck %s --check-prefix=ONE
// ONE-NOT: ein.repartition
// ONE: ein.attention {{.*}}spec = #ein.spec<[1, 1, 1, 1, 1]>
// ONE-NOT: ein.repartition
// ONE: ein.assemble
