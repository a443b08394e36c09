// ein-decompose{stages=1xM}: a chunked plan (docs/physical.md). One stage
// over all GPUs, the batch of 4 cut into M chunks by ein.slice, each op
// copied per chunk, every copy with its op's spec and all the GPUs in
// `ein.place`, and the function marked `ein.dataflow`: its bundle spreads
// each GPU's steps over several streams, so one chunk's exchange can run
// while another chunk computes. The copies come in the order that
// simulates fastest (physical::ChunkOrder): here chunk by chunk, the first
// chunk's ops, then the second's; the explanation says so.
// RUN: %python %ein_src_root/examples/gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 4 --seq 16 > %t.b4.mlir
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="stages=1x2 explain=%t.order.json" | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @llama_block(%arg0: tensor<4x16x64xf32>
// IR-SAME: attributes {ein.dataflow}
// IR-NEXT: %[[X0:.*]] = ein.slice %arg0 [0, 0, 0] [2, 16, 64] {ein.place = array<i64: 0, 1>, spec = #ein.spec<[2, 1, 1]>}
// IR-NEXT: %[[X1:.*]] = ein.slice %arg0 [2, 0, 0] [2, 16, 64] {ein.place = array<i64: 0, 1>, spec = #ein.spec<[2, 1, 1]>}
// IR-NEXT: ein.rms_norm %[[X0]], %arg1 {{.*}}ein.place = array<i64: 0, 1>{{.*}} : tensor<2x16x64xf32>
// IR-NEXT: ein.join_agg
// IR-NEXT: ^bb0
// IR: ein.attention {{.*}}ein.place = array<i64: 0, 1>{{.*}} -> tensor<2x4x16x16xf32>
// IR: ein.rms_norm %[[X1]], %arg1 {{.*}}ein.place = array<i64: 0, 1>{{.*}} : tensor<2x16x64xf32>
// IR: ein.attention {{.*}}ein.place = array<i64: 0, 1>{{.*}} -> tensor<2x4x16x16xf32>
// IR: %[[Y:.*]] = ein.concat dim 0 %{{[0-9]+}}, %{{[0-9]+}} {ein.place = array<i64: 0, 1>, spec = #ein.spec<[2, 1, 1]>} : tensor<2x16x64xf32>, tensor<2x16x64xf32> -> tensor<4x16x64xf32>
// IR-NEXT: return %[[Y]] : tensor<4x16x64xf32>
// RUN: FileCheck %s --check-prefix=ORDER < %t.order.json
// ORDER: "lowered": true,
// ORDER-NEXT: "micro_batches": 2,
// ORDER-NEXT: "order": "chunk",

// Lowered, the argument arrives in the parts its chunks' slices read, each
// where the slice needs it (batches 0 and 2 on GPU 0, 1 and 3 on GPU 1), as
// the plan was priced: no slice moves a byte, and the program moves exactly
// the bytes and simulates exactly the time the explanation priced.
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="strategy=megatron stages=1x2 explain=%t.chunks.json" --ein-insert-exchanges --ein-synthesize-exchanges="exchange=synthesized report=%t.lowered.json" | FileCheck %s --check-prefix=LOWERED
// LOWERED: ein.partition %arg0 : tensor<4x16x64xf32> -> !ein.rel<4x16x64xf32, parts = [4, 1, 1], devices = [0, 1, 0, 1]>
// RUN: %python -c "import json, sys; p = json.load(open(sys.argv[1]))['pipeline'][0]; f = json.load(open(sys.argv[2]))['functions'][0]; print('priced', p['bytes'], round(p['simulated_ms'], 9), 'lowered', sum(f['bytes'].values()), round(f['simulated_ms'], 9), 'argument moves', sum(e['bytes'] for e in f['exchanges'] if e['value'] == 'arg0'))" %t.chunks.json %t.lowered.json | FileCheck %s --check-prefix=MATCH
// MATCH: priced [[BYTES:[0-9]+]] [[MS:[0-9.]+]] lowered [[BYTES]] [[MS]] argument moves 0

// stages=auto weighs the chunked plans on one node too, each simulated as a
// dataflow program (a step waits for its dependencies only); the JSON marks
// them.
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="strategy=megatron stages=auto explain=-" -o /dev/null | FileCheck %s --check-prefix=AUTO
// AUTO: pipeline stages for @llama_block (simulated; the plan above: [[MS:[0-9.]+]] ms):
// AUTO-NEXT: the plan above as a dataflow program: {{[0-9.]+}} ms, 0.0 B between nodes
// AUTO-NEXT: 1 stage x 2 chunks (dataflow): {{[0-9.]+}} ms, 0.0 B between nodes
// AUTO-NEXT: 1 stage x 4 chunks (dataflow): {{[0-9.]+}} ms, 0.0 B between nodes
// AUTO-NEXT: faster by the simulator:
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="strategy=megatron stages=1x2 explain=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// JSON: "pipeline": [
// JSON: "dataflow": true,
// JSON: "lowered": true,
// JSON-NEXT: "micro_batches": 2,
// JSON: "stages": 1,

// stages=1x1: the plan itself as a dataflow program (a weight gathered
// while earlier ops run): no slices or copies, the function marked.
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="weights-replicable=false stages=1x1 explain=-" -o %t.whole.mlir | FileCheck %s --check-prefix=WHOLE
// WHOLE: pipeline stages for @llama_block (simulated; the plan above: {{[0-9.]+}} ms):
// WHOLE-NEXT: the plan above as a dataflow program: {{[0-9.]+}} ms, 0.0 B between nodes
// WHOLE: lowered: 1x1 (stages x micro-batches)
// RUN: FileCheck %s --check-prefix=WHOLEIR < %t.whole.mlir
// WHOLEIR: func.func @llama_block(%arg0: tensor<4x16x64xf32>
// WHOLEIR-SAME: attributes {ein.dataflow, ein.weights_move}
// WHOLEIR-NOT: ein.slice
// WHOLEIR-NOT: ein.place
// WHOLEIR: return
// It rewrites nothing, so any strategy and tie-layout go with it (not so
// with chunks).
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="strategy=dp tie-layout=true stages=1x1" | FileCheck %s --check-prefix=DP
// DP: attributes {ein.dataflow, ein.tie_layout}
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="strategy=dp stages=1x2" 2>&1 | FileCheck %s --check-prefix=DPCHUNKS
// DPCHUNKS: error: stages=1x2 cuts a stage's ops with the optimal or megatron strategy, not 'dp'
// stages=auto weighs it first, with the chunked plans.
// RUN: ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="weights-replicable=false stages=auto explain=-" -o /dev/null | FileCheck %s --check-prefix=AUTOWHOLE
// AUTOWHOLE: pipeline stages for @llama_block
// AUTOWHOLE-NEXT: the plan above as a dataflow program:
// AUTOWHOLE-NEXT: 1 stage x 2 chunks (dataflow):

// A batch of 1 is chunked along its sequence (dimension 1 of the
// activations): the ops before and after attention copied per chunk, the
// RoPE table (a weight read along the sequence) cut with them, and causal
// attention, which reads the sequence through its queries and its keys, run
// per chunk of its queries over the keys up to the chunk's last: chunk 0 on
// its own chunks, chunk 1 on both chunks' keys and values put back together,
// its diagonal shifted by 8 (query_offset).
// RUN: %python %ein_src_root/examples/gen_llama_block.py --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 1 --seq 16 > %t.b1.mlir
// RUN: ein-opt %t.b1.mlir --ein-attach-target="devices=2" --ein-decompose="stages=1x2" | FileCheck %s --check-prefix=SEQ
// SEQ-LABEL: func.func @llama_block(%arg0: tensor<1x16x64xf32>
// SEQ-SAME: attributes {ein.dataflow}
// SEQ-NEXT: ein.slice %arg0 [0, 0, 0] [1, 8, 64] {ein.place = array<i64: 0, 1>
// SEQ-NEXT: ein.slice %arg0 [0, 8, 0] [1, 8, 64]
// SEQ-NEXT: ein.slice %arg10 [0, 0, 0, 0] [2, 2, 8, 8]
// SEQ-NEXT: ein.slice %arg10 [0, 0, 8, 0] [2, 2, 8, 8]
// SEQ-NEXT: ein.rms_norm {{.*}} : tensor<1x8x64xf32>
// SEQ: ein.attention %[[Q0:.*]], %[[K0:.*]], %[[V0:.*]] {causal, ein.place = array<i64: 0, 1>, group = 2 : i64, spec = {{.*}}} : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
// SEQ: %[[K:.*]] = ein.concat dim 2 %[[K0]], %[[K1:[^ ]*]] {{.*}} -> tensor<1x2x16x16xf32>
// SEQ-NEXT: %[[V:.*]] = ein.concat dim 2 %[[V0]], %[[V1:[^ ]*]] {{.*}} -> tensor<1x2x16x16xf32>
// SEQ-NEXT: ein.attention %{{.*}}, %[[K]], %[[V]] {causal, ein.place = array<i64: 0, 1>, group = 2 : i64, query_offset = 8 : i64, {{.*}}} : tensor<1x4x8x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x8x16xf32>
// SEQ-NOT: ein.slice
// SEQ: %[[Y:.*]] = ein.concat dim 1 {{.*}} -> tensor<1x16x64xf32>
// SEQ-NEXT: return %[[Y]]
// stages=auto weighs them, as long as every chunk can take its op's cut;
// the JSON says what they cut.
// RUN: ein-opt %t.b1.mlir --ein-attach-target="devices=2" --ein-decompose="stages=auto explain=-" -o /dev/null | FileCheck %s --check-prefix=BATCH1
// BATCH1: the plan above as a dataflow program:
// BATCH1-NEXT: 1 stage x 2 chunks of the sequence (dataflow): {{[0-9.]+}} ms
// BATCH1: 1 stage x 16 chunks of the sequence (dataflow): none: op 'ein.rms_norm #0@0' cannot take its plan's cut of loop d1 (2 parts of 1)
// RUN: ein-opt %t.b1.mlir --ein-attach-target="devices=2" --ein-decompose="stages=1x2 explain=%t.seq.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=SEQJSON < %t.seq.json
// SEQJSON: "cut": "sequence",
// SEQJSON-NEXT: "dataflow": true,
// SEQJSON: "lowered": true,
// SEQJSON-NEXT: "micro_batches": 2,

// Refusals: a batch of 1 whose dimension 1 is no sequence (summed), chunks
// must divide the batch, and there is no chunked plan of no chunks.
// RUN: sed 's/64x128/1x128/g; s/64x512/1x512/g' %ein_src_root/examples/mlp.mlir > %t.row.mlir
// RUN: ein-opt %t.row.mlir --ein-attach-target="devices=2" --ein-decompose="stages=auto explain=-" -o /dev/null | FileCheck %s --check-prefix=ROW
// ROW: none: the batch is 1 and the sequence cannot be chunked: op 'ein.join_agg #0' aggregates over the sequence
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="stages=1x3" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: error: 'func.func' op has no plan of 3 chunks: the batch (4) does not split into 3 micro-batches
// RUN: not ein-opt %t.b4.mlir --ein-attach-target="devices=2" --ein-decompose="stages=1x0" 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: stages must be off, auto, or SxM (S >= 2 stages over M >= 1 micro-batches, e.g. 2x4, or 1xM: the batch (or a batch of 1's sequence) in M chunks, 1x1 the plan as a dataflow program), got '1x0'

// A value computed once from no chunked value (a table scaled once) and
// read along the sequence is cut after its op, which runs once: its slices
// feed each chunk's copy. The bundle computes the program.
// RUN: ein-opt %S/Inputs/sequence_once.mlir --ein-attach-target="devices=2" --ein-decompose="stages=1x2" | FileCheck %s --check-prefix=ONCE
// ONCE: %[[T:.*]] = ein.join_agg none ins(%arg1[d0, d1] : tensor<16x8xf32>) out[d0, d1]
// ONCE: %[[X0:.*]] = ein.slice %arg0 [0, 0, 0] [1, 8, 8]
// ONCE: %[[X1:.*]] = ein.slice %arg0 [0, 8, 0] [1, 8, 8]
// ONCE: %[[T0:.*]] = ein.slice %[[T]] [0, 0] [8, 8]
// ONCE: %[[T1:.*]] = ein.slice %[[T]] [8, 0] [8, 8]
// ONCE: ein.join_agg none ins(%[[X0]][d0, d1, d2], %[[T0]][d1, d2]
// ONCE: ein.join_agg none ins(%[[X1]][d0, d1, d2], %[[T1]][d1, d2]
// ONCE: ein.concat dim 1
// RUN: rm -rf %t.once && ein-compile %S/Inputs/sequence_once.mlir -o %t.once --devices=2 --stages=1x2 > /dev/null
// RUN: ein-run %t.once --check --debug | FileCheck %s --check-prefix=ONCECHECK
// ONCECHECK: max_rel_err={{[0-9.]+(e-0[5-9]|e-[1-9][0-9])?$}}
