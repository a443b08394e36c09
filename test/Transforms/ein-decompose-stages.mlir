// ein-decompose{stages}: a pipeline-staged plan lowered (docs/distributed.md).
// The batch of 4 is cut into micro-batches by ein.slice, every op that reads
// it copied per micro-batch (micro-batch-major), the result put back by
// ein.concat; every op carries its stage's cut (`spec`, the same for each
// copy) and its stage's GPUs (`ein.place`): stage 0 on node 0 (GPUs 0, 1),
// stage 1 on node 1 (GPUs 2, 3).
// RUN: %python %ein_src_root/examples/gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 4 --seq 16 > %t.b4.mlir
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x2" | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @llama_block(%arg0: tensor<4x16x64xf32>
// IR-NEXT: %[[X0:.*]] = ein.slice %arg0 [0, 0, 0] [2, 16, 64] {ein.place = array<i64: 0, 1>, spec = #ein.spec<[2, 1, 1]>} : tensor<4x16x64xf32> -> tensor<2x16x64xf32>
// IR-NEXT: %[[X1:.*]] = ein.slice %arg0 [2, 0, 0] [2, 16, 64] {ein.place = array<i64: 0, 1>, spec = #ein.spec<[2, 1, 1]>}
// IR-NEXT: ein.rms_norm %[[X0]], %arg1 {{.*}}ein.place = array<i64: 0, 1>{{.*}} : tensor<2x16x64xf32>
// IR: ein.attention {{.*}}ein.place = array<i64: 0, 1>{{.*}} -> tensor<2x4x16x16xf32>
// IR: ein.join_agg {{.*}}ein.place = array<i64: 2, 3>{{.*}} : tensor<2x16x64xf32>
// The second micro-batch starts from its slice, after the whole first one.
// IR: ein.rms_norm %[[X1]], %arg1
// IR: ein.attention {{.*}}ein.place = array<i64: 0, 1>{{.*}} -> tensor<2x4x16x16xf32>
// IR: ein.join_agg {{.*}}ein.place = array<i64: 2, 3>{{.*}} : tensor<2x16x64xf32>
// IR: %[[Y:.*]] = ein.concat dim 0 %{{[0-9]+}}, %{{[0-9]+}} {ein.place = array<i64: 2, 3>, spec = #ein.spec<[2, 1, 1]>} : tensor<2x16x64xf32>, tensor<2x16x64xf32> -> tensor<4x16x64xf32>
// IR-NEXT: return %[[Y]] : tensor<4x16x64xf32>

// The explanation says which plan is lowered: stages=auto keeps the
// intra-op plan where it simulates faster (data parallel here: nothing
// crosses the nodes) and takes the staged one where that is faster (Megatron
// over all four GPUs against Megatron within each node, stages across).
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=auto explain=-" -o %t.auto.mlir | FileCheck %s --check-prefix=AUTO
// AUTO: pipeline stages for @llama_block
// AUTO: faster by the simulator: the plan above
// AUTO-NEXT: lowered: the plan above (stages=off; stages=auto or SxM lowers a staged plan)
// RUN: FileCheck %s --check-prefix=INTRA < %t.auto.mlir
// INTRA-NOT: ein.place
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="strategy=megatron stages=auto explain=-" -o %t.mauto.mlir | FileCheck %s --check-prefix=MAUTO
// MAUTO: faster by the simulator: 2 stages x 1 micro-batch, {{[0-9.]+}}x
// MAUTO-NEXT: lowered: 2x1 (stages x micro-batches)
// RUN: FileCheck %s --check-prefix=MIR < %t.mauto.mlir
// MIR: ein.place = array<i64: 2, 3>
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x4 explain=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// JSON: "pipeline": [
// JSON: "lowered": false,
// JSON: "lowered": true,
// JSON-NEXT: "micro_batches": 4,

// Refusals: each says what would make the plan lowerable.
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x3" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: error: 'func.func' op has no plan of 2 stages over 3 micro-batches: the batch (4) does not split into 3 micro-batches
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=3x1" 2>&1 | FileCheck %s --check-prefix=NODES
// NODES: error: 'func.func' op has no plan of 3 stages over 1 micro-batch: 3 stages do not divide 2 nodes
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=4" --ein-decompose="stages=2x2" 2>&1 | FileCheck %s --check-prefix=ONENODE
// ONENODE: error: stages=2x2 needs a topology of several nodes (topology=nodes=K,gpus=G); stages run on node groups (1xM chunks the batch on one)
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2" 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error: stages must be off, auto, or SxM (S >= 2 stages over M >= 1 micro-batches, e.g. 2x4, or 1xM: the batch (or a batch of 1's sequence) in M chunks, 1x1 the plan as a dataflow program), got '2'
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x2 strategy=dp" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: stages=2x2 cuts a stage's ops with the optimal or megatron strategy, not 'dp'
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x2 tie-layout=true" 2>&1 | FileCheck %s --check-prefix=TIE
// TIE: error: stages=2x2 cannot tie results to their arguments' layouts (tie-layout)
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x2 memory-limit=100000" 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: error: 'func.func' op has no plan of 2 stages over 2 micro-batches within the memory limit of 100000 bytes a GPU: it needs 104960 bytes (102.5 KiB) on GPU 0
// RUN: not ein-opt %ein_src_root/examples/matrix_chain.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x1" 2>&1 | FileCheck %s --check-prefix=NOBATCH
// NOBATCH: error: 'func.func' op has no plan of 2 stages over 1 micro-batch: the activation arguments share no batch dimension
// An op that reads its position in the batch cannot be copied per
// micro-batch (this file's function).
// RUN: not ein-opt %s --ein-attach-target="devices=2 topology=nodes=2,gpus=1" --ein-decompose="stages=2x2" 2>&1 | FileCheck %s --check-prefix=POSITION
// POSITION: error: 'ein.join_agg' op cannot be staged: it reads its batch position (ein.index 0), which a micro-batch's copy would not know

func.func @positional(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = ein.join_agg none ins(%x[d0, d1] : tensor<4x8xf32>) out[d0, d1] : tensor<4x8xf32> {
  ^bb0(%a: f32):
    %i = ein.index 0 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    %s = arith.addf %a, %f : f32
    ein.yield %s : f32
  }
  return %y : tensor<4x8xf32>
}

// Under a memory limit a staged plan is held to the planner's memory model
// as lowered: each stage's weights on its GPUs, every micro-batch copy's
// activations while they live (GPU 0: 104960 bytes for 2x2, where the
// intra-op plan holds 178688). stages=auto lowers the fastest plan that
// fits: within 100000 the intra-op plan that fits (Megatron's, found by the
// memory fallbacks) simulates slower than every staged or chunked plan;
// the chunked 1x2 (the fastest), 2x1 (117248 bytes) and 2x2 do not fit,
// 2x4 (98816) does and is lowered. Within 90000 no staged plan fits and the
// intra-op plan is lowered, as a dataflow program (faster, and the same
// memory).
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=2x2 memory-limit=200000" | FileCheck %s --check-prefix=FITS
// FITS: ein.planned_memory = 104960
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=auto memory-limit=100000 explain=-" -o %t.fit.mlir | FileCheck %s --check-prefix=AUTOFIT
// AUTOFIT: faster by the simulator: 1 stage x 2 chunks (dataflow)
// AUTOFIT-NEXT: lowered: 2x4 (stages x micro-batches); the fastest that fits memory-limit
// RUN: FileCheck %s --check-prefix=FITS24 < %t.fit.mlir
// FITS24: ein.planned_memory = 98816
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="stages=auto memory-limit=90000 explain=-" -o %t.intra.mlir | FileCheck %s --check-prefix=AUTOINTRA
// AUTOINTRA: lowered: 1x1 (stages x micro-batches); the fastest that fits memory-limit
// RUN: FileCheck %s --check-prefix=INTRAMEM < %t.intra.mlir
// INTRAMEM: ein.planned_memory = 74752
// INTRAMEM-NOT: ein.place
