//===- Passes.td - ein passes -------------------------------*- tablegen -*-===//

#ifndef EINSUMMABLE_TRANSFORMS_PASSES_TD
#define EINSUMMABLE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def EinAttachTarget : Pass<"ein-attach-target", "::mlir::ModuleOp"> {
  let summary = "Attach the #ein.target every later pass reads";
  let description = [{
    Sets `ein.target = #ein.target<devices = N, topology = T, chip = C>` on
    the module, validating the options first (1 to 64 devices, a known
    topology or a `.json` file, an `sm_<N>` or `host` chip). A topology file
    is read here, once: the target records its JSON text, so the module is
    self-contained and no later stage reads a file. It is the first
    stage of every `ein-compile` pipeline, so the device count, topology,
    chip and backend cannot disagree between passes. A module that already
    carries a different target is an error, not silently retargeted; one
    whose target names no backend takes the `backend` given (a target
    grows, it is never changed).

    ```
    ein-opt --ein-attach-target="devices=8 topology=nvswitch chip=sm_90" in.mlir
    ```
  }];
  let dependentDialects = ["::mlir::ein::EinDialect"];
  let options = [
    Option<"devices", "devices", "int64_t", "1", "Number of GPUs, 1 to 64">,
    Option<"topology", "topology", "std::string", "\"nvswitch\"",
           "Topology preset, nodes=K,gpus=G, or a topology .json file">,
    Option<"chip", "chip", "std::string", "\"sm_90\"",
           "Chip: sm_<N> for CUDA, host for the CPU target">,
    Option<"partials", "partials", "std::string", "\"acc\"",
           "acc (partial sums in the accumulator type) or out (in the "
           "result's element type: half the bytes for bf16)">,
    Option<"backend", "backend", "std::string", "\"\"",
           "cpu or cuda: what the bundle runs on (empty: not chosen yet)">,
  ];
}

def EinMarkWeights : Pass<"ein-mark-weights", "::mlir::ModuleOp"> {
  let summary = "Mark function arguments as weights, as {ein.weight} would";
  let description = [{
    Sets `{ein.weight}` on the arguments `args` names, in every function
    with a body: each item is a 0-based argument position or an argument's
    name (its `loc("name")`, the way MLIR names an argument). Linalg from a
    front end carries no weight marks; without them the planner treats
    weights as activations, moves them and charges their replicas.
    `ein-compile --weights=0,2,5` runs it first. A position past the last
    argument or a name no argument has is an error.

    ```
    ein-opt --ein-mark-weights="args=1,2" mlp.mlir
    ```
  }];
  let dependentDialects = ["::mlir::ein::EinDialect"];
  let options = [
    ListOption<"args", "args", "std::string",
               "Argument positions (0-based) or names">,
  ];
}

def EinAutodiff : Pass<"ein-autodiff", "::mlir::ModuleOp"> {
  let summary = "Append the gradients of a scalar loss as join-aggs";
  let description = [{
    For every function with a body whose first result is a scalar float
    loss (rank 0, or every extent 1), appends the gradient of the loss
    with respect to each argument marked `{ein.weight}` or `{ein.grad}` as
    a new result, in argument order, typed as the argument. Runs on the
    logical level, after `ein-import` and before the composites are fused:
    the gradients are join-aggs (and reshapes, slices, concats) that the
    planner cuts like any other op.

    The adjoint of a join-agg with a sum aggregation (or none) is, for each
    input that depends on a marked argument, a join-agg over the same loops
    that reads the result's adjoint and the inputs, differentiates the
    region with respect to that input, and sums over the loops the input
    does not carry: a matmul's two gradient matmuls fall out as ordinary
    join-aggs. A max or min aggregation routes the adjoint to its
    extremum, shared evenly among ties (as `torch.amax` does). Regions are
    differentiated op by op (addf, subf, mulf, divf, negf, casts, exp,
    log, tanh, erf, sqrt, rsqrt, powf, absf, maximumf and minimumf, select;
    comparisons, integers, constants and `ein.index` carry none). An op
    without a rule is an error that names it; so is a function whose
    first result is not a scalar or which marks no argument.

    ```
    ein-opt --ein-import --ein-autodiff mlp-loss.mlir
    ein-opt --ein-import --ein-autodiff="optimizer=adamw:beta2=0.95,weight_decay=0.1" mlp-loss.mlir
    ```

    With `optimizer`, the weights' gradients feed one step of it instead,
    as torch.optim computes it: `sgd` (momentum, Nesterov, weight decay;
    dampening 0) or `adamw` (f32 moments, bias correction, decoupled weight
    decay), optionally after clipping the gradients to a global 2-norm
    (`max_grad_norm`). The function gains arguments: the learning rate
    `lr` (tensor<f32>, so a schedule may change it between steps), AdamW's
    step count `step` (tensor<f32>, from 1), and each weight's f32 state
    (`momentum_buffer`; `exp_avg` and `exp_avg_sq`), zeros before the first
    step. Its results become the loss, the updated weights, the updated
    state, then the gradients of `{ein.grad}` arguments; each updated
    value carries `{ein.updates = N}`, the argument it replaces for the
    next step.
  }];
  let dependentDialects = ["::mlir::ein::EinDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let options = [
    Option<"optimizer", "optimizer", "std::string", "\"\"",
           "One optimizer step after the gradients: sgd[:momentum=M,"
           "nesterov=0|1,weight_decay=W,max_grad_norm=N] or adamw[:beta1=B1,"
           "beta2=B2,eps=E,weight_decay=W,max_grad_norm=N] (empty: the "
           "gradients are the results)">,
  ];
}

def EinImport : Pass<"ein-import", "::mlir::ModuleOp"> {
  let summary = "Import linalg on tensors into ein join-aggs";
  let description = [{
    Turns each function on ranked tensors written in linalg (named ops,
    `linalg.generic`, `linalg.softmax`), `linalg.fill`, tensor layout ops and
    scalar arith/math into ein: afterwards no linalg or tensor op remains.
    `linalg.softmax` is first decomposed (upstream's
    `AggregatedOpInterface`), named ops generalized (`generalizeNamedOp`),
    and an elementwise generic with one user folded into that user when the
    user is elementwise too or reduces a single input (upstream's
    elementwise fusion; never into a contraction, which keeps its plain
    product). Each generic then becomes one `ein.join_agg`:

    * every operand's indexing map must be a projected permutation of the
      loops, or read one loop as `dK floordiv c` (GQA), which splits that
      loop in two around reshapes, or read a unit dimension at the
      constant 0 (keepdim), which is collapsed away; its dimensions become
      the operand's loop indices; an input filled with a constant becomes
      that constant in the body;
    * an elementwise body (parallel loops only) becomes the join; if it
      reads its output's initial value, that value joins as one more input;
    * a body over reduction loops must yield `combine(accumulator, f)`
      with `combine` an add, mul, max or min (float or signed integer) and
      `f` computed from the inputs only: `f` becomes the join and `combine`
      the aggregation kind;
    * `linalg.index` becomes `ein.index`;
    * a reduction's initial value is dropped when it is a `linalg.fill` of
      the combine's identity (0, 1, -inf, +inf; NaN for maxnumf/minnumf) or
      an unwritten `tensor.empty`; any other is combined with the result by
      one more elementwise join-agg using the reduction's own combine. A
      fill nothing reduces from becomes a join-agg with no inputs yielding
      the constant.

    Layout ops: `tensor.expand_shape`/`collapse_shape` become `ein.reshape`,
    static unit-stride `extract_slice` an `ein.slice` (and a reshape when it
    drops unit dimensions), `insert_slice` concatenations of slices of the
    destination around the source, `tensor.concat` an `ein.concat`.

    Windows: a generic reading its first input at `oh * stride + kh *
    dilation` in the rows and columns of an nhwc or nchw tensor becomes
    `ein.conv` (a sum of input times an hwcf/fchw filter) or `ein.pool` (a
    max or sum of the input), a zero (or -inf) `tensor.pad` of the rows and
    columns before it its padding. Grouped convolutions in ngchw (filter
    gfchw) and depthwise ones (nchw with a chw filter, nhwc with hwc or hwcm)
    become `ein.conv` with `groups` on 4-D operands, regrouped by reshapes
    (the front end's expand and collapse around them cancel).

    The join computes in the accumulator type (f32 for bf16/f16 results):
    a body computing in a narrower float is extended before its yield.
    Anything else (a map that is neither, a body that is not a join plus an
    aggregation, a strided slice, dynamic shapes, another linalg or tensor
    op) gets a diagnostic naming the op and the reason.

    ```mlir
    %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>)
                       outs(%zero : tensor<64x16xf32>) -> tensor<64x16xf32>
    // becomes
    %r = ein.join_agg add ins(%a[d0, d2], %b[d2, d1] : ...) out[d0, d1] ...
    ```
  }];
  let dependentDialects = ["::mlir::ein::EinDialect",
                           "::mlir::arith::ArithDialect"];
}

def EinFuseComposites : Pass<"ein-fuse-composites", "::mlir::ModuleOp"> {
  let summary = "Recognise composites (softmax, attention, RMSNorm, LayerNorm) and RoPE's rotate-half among logical join-aggs";
  let description = [{
    Rewrites patterns of logical `ein.join_agg`s (as `ein-import` leaves
    linalg programs) into the composites whose fused kernels and spec rules
    the planner and code generators know, in this order:

    * softmax along one dimension:
      ```mlir
      %m = ein.join_agg max ins(%x[d0, d1]) out[d0]          // yields x
      %p = ein.join_agg none ins(%x[d0, d1], %m[d0]) out[d0, d1]  // exp(x - m)
      %s = ein.join_agg add ins(%p[d0, d1]) out[d0]          // yields p
      %y = ein.join_agg none ins(%p[d0, d1], %s[d0]) out[d0, d1]  // p / s
      // becomes
      %y = ein.softmax %x dim 1 : tensor<...>
      ```
    * attention around such a softmax over keys: scores
      `sum_d q[.., s, d] k[.., t, d]` (times a constant), optionally one
      elementwise op scaling them and masking keys after the query
      (`select(t > s, -inf, x)`, or any mask value at or below -1000 once
      scaled, which exp sends to 0 (-1e9, `finfo.min`), in
      either orientation of the compare), the softmax, and
      `sum_t p[.., s, t] v[.., t, e]`, on `[batch, heads, tokens, dim]` or
      `[heads, tokens, dim]` (given a batch of one). Grouped-query attention
      is recognised through the reshapes `ein-import` puts around a
      `h floordiv g` map. Becomes `ein.attention {causal, group, scale}`;
    * RMSNorm: `ss = sum_i x * x` and one elementwise join
      `x * w * rsqrt(ss / n + eps)` (or `/ sqrt(..)`, `ss * (1/n)`, any
      order of factors, casts between) becomes `ein.rms_norm x, w eps`;
    * LayerNorm: `s = sum_i x`, the mean `m = s / n` (an op of its own or
      in each body), `v = sum_i (x - m)^2` and one elementwise join
      `(x - m) * rsqrt(v / n + eps)`, times a weight and plus a bias where
      present (`x - m` may be a tensor read by both, as torch-mlir's
      decomposition leaves it; the statistics used nowhere else) becomes
      `ein.layer_norm x [weight w] [bias b] eps`;
    * RoPE's rotate-half, `concat(-x[.., h:], x[.., :h])` along a
      dimension, becomes that dimension split into (2, h) and a 2 x 2
      rotation join over it: a join every spec may cut, where a concat of
      halves fixes the cut to the halves.

    Each pattern must match exactly, with intermediate values used nowhere
    else; everything else is left as it is (and still compiles).

    Where a softmax reads the product of two tensors (an attention's
    scores) but the rest of the pattern does not match, a remark names the
    softmax and what stood in the way (`remarks=none` silences it); the
    softmaxes of one source location missed for one reason (a model's
    layers) share one remark, which says how many they are.
  }];
  let options = [
    Option<"remarks", "remarks", "std::string", "\"missed\"",
           "missed: remark on attention that almost fused; none">,
  ];
  let dependentDialects = ["::mlir::ein::EinDialect",
                           "::mlir::arith::ArithDialect"];
}

def EinExportProgram : Pass<"ein-export-program", "::mlir::ModuleOp"> {
  let summary = "Write the logical program as program.json for the reference evaluator";
  let description = [{
    Describes one logical function (ein ops on ranked tensors) in the
    MLIR-free program.json format that `ein-eval` reads (documented in
    `docs/program-format.md`) and writes it to `file`. The IR is left
    unchanged. An op with no program.json form (a planned or device-level op,
    an unsupported scalar op in a join region) is an error naming it.

    `ein-opt --ein-export-program=FILE` is shorthand for
    `--ein-export-program="file=FILE"`.

    ```
    ein-opt examples/mlp.mlir --ein-export-program=mlp.json -o /dev/null
    ein-eval mlp.json --seed=1
    ```
  }];
  let options = [
    Option<"file", "file", "std::string", "\"\"",
           "Where to write program.json ('-' for standard output)">,
    Option<"function", "function", "std::string", "\"\"",
           "The function to export (default: the only one with a body)">,
  ];
}

def EinExportShard : Pass<"ein-export-shard", "::mlir::ModuleOp"> {
  let summary = "Write ein's plan onto a linalg program as upstream shard annotations";
  let description = [{
    Takes a linalg-on-tensors module carrying its `#ein.target` (run
    `ein-attach-target` first), plans a copy of it as ein-compile does
    (ein-import, ein-fuse-composites, ein-decompose with this pass's planner
    options) and rewrites the module into the program as given, annotated
    with upstream MLIR's `shard` dialect: a `shard.grid` per grid used, and
    a `shard.sharding` + `shard.shard` on every value whose layout the plan
    fixes: each charged argument's arrival layout, each op's result (after
    its aggregation: `shard.sharding` has no partial sums) and, with
    `annotate_for_users`, how each op reads its operands. A split the
    device grid's axes express (the prime factors of the device count, or
    a `shard.grid` of the input with that shape) uses it; another cut gets
    a grid of its own shape. Uneven cuts carry `sharded_dims_offsets`.
    Values the input already annotates keep their annotations as written.
    The `ein.target` attribute is dropped, so upstream `mlir-opt` reads the
    result. docs/interop.md describes the mapping.

    ```
    ein-opt mlp.mlir --ein-attach-target=devices=4 --ein-export-shard |
      mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))'
    ```
  }];
  let dependentDialects = ["::mlir::ein::EinDialect",
                           "::mlir::shard::ShardDialect"];
  let options = [
    Option<"weightsReplicable", "weights-replicable", "bool", "true",
           "As ein-decompose's">,
    Option<"stateCap", "state-cap", "int64_t", "131072",
           "As ein-decompose's">,
    Option<"searchBudget", "search-budget", "int64_t", "10000000",
           "As ein-decompose's">,
    Option<"allowInexact", "allow-inexact", "bool", "false",
           "As ein-decompose's">,
    Option<"exact", "exact", "bool", "false", "As ein-decompose's">,
    Option<"tieLayout", "tie-layout", "bool", "false",
           "As ein-decompose's">,
    Option<"strategy", "strategy", "std::string", "\"optimal\"",
           "As ein-decompose's">,
    Option<"seed", "seed", "uint64_t", "0", "As ein-decompose's">,
    Option<"memoryLimit", "memory-limit", "int64_t", "0",
           "As ein-decompose's">,
  ];
}

def EinEnumerateSpecs : Pass<"ein-enumerate-specs", "::mlir::ModuleOp"> {
  let summary = "List every legal spec of every op as ein.candidates";
  let description = [{
    For each op of each function (join-aggs, composites and layout ops),
    attaches `ein.candidates = [#ein.spec<...>, ...]`: every cut of its loops
    into parts whose product is the target's device count, with no loop cut
    beyond its size, the composites' whole dimensions left whole (attention's
    key loop only where the target can combine key blocks; softmax's
    dimension; RMSNorm's last dimension), and each collapsed dimension cut
    only where an ordinary cut of it would be. Candidates are in decreasing
    lexicographic order (outer loops cut most first), the order in which the
    search breaks ties. `ein-decompose` searches over the same sets; this
    pass shows them.

    Needs the module's `#ein.target` (`ein-attach-target`).
  }];
}

def EinDecompose : Pass<"ein-decompose", "::mlir::ModuleOp"> {
  let summary = "Choose a spec for every op by whole-graph search on the byte proxy";
  let description = [{
    Builds the planner's graph of each function and runs the whole-graph
    search of `docs/planner.md`: dynamic programming over a topological
    order whose state is the layouts of the live values, exact unless the
    state cap bites: then it keeps the best plan its bounded search found,
    with a warning giving its cost and a lower bound on the optimum's (the
    cheapest state it dropped), or, with `exact`, fails saying so. The cost
    is the byte proxy of
    docs/planner.md (join copies, aggregation in the accumulator type,
    repartition between producer and consumer) plus the busiest GPU's FLOPs
    converted to bytes. Activation arguments arrive free in any
    non-overlapping partition; weights (`ein.weight`) are free in any
    layout, replicas included, unless `weights-replicable=false`.

    On a topology of several nodes (`nodes=K,gpus=G`) the optimal strategy
    searches hierarchically (`hierarchical`, on by default): the whole
    graph is planned for K devices first, then for K x G with each op's
    specs restricted to its node-level cut refined within a node
    (`planner::hierarchicalSpecs`, docs/distributed.md). There `explain`
    also prices pipeline stages (`pipeline`, on by default, with the
    optimal and megatron strategies): the ops cut into stages of
    consecutive ops on node groups, the batch into micro-batches, each
    stage's ops cut by the strategy for its devices, simulated like the
    plan, and says which is faster (`physical::stagedPlans`). `stages`
    lowers one: `SxM`, or `auto` for whichever simulates fastest, chunked
    plans included (`1xM`: one stage over every GPU, the batch in M chunks,
    or, for a batch of 1, the sequence, causal attention per chunk of its
    queries over the keys up to it, the copies op by op, chunk by chunk or
    by critical path, whichever simulates fastest, the function marked
    `ein.dataflow` so that one chunk's exchange overlaps another's compute,
    `physical::chunkedPlans`, docs/physical.md; `1x1`: the intra-op plan
    itself marked `ein.dataflow`, so exchanges nothing waits for, such as
    a weight gathered ahead of its op, overlap the compute); the
    function is rewritten into micro-batch copies (`ein.slice` of the
    batch, each batched op copied per micro-batch, `ein.concat` of the
    results) and every op gets its stage's `spec` and `ein.place`
    (applyStagedPlan, docs/distributed.md).

    Sets `spec` on every op and drops `ein.candidates`. With `remarks`, each
    op gets a remark with its spec and cost terms. `strategy` restricts the
    search to data-parallel, Megatron-style or random plans (docs/planner.md);
    `explain` writes, per op, the chosen spec, its cost terms and the whole
    plan's cost under each alternative spec, with the simulated step and its
    exchanges (docs/explain.md); the placement and exchange forms that step
    was simulated with stay on the function (`ein.exchange_choice`) for
    ein-synthesize-exchanges to lower, so explaining costs no second
    placement. A search that runs longer than
    `progress-seconds` says how far it has come on standard error.
  }];
  let options = [
    Option<"weightsReplicable", "weights-replicable", "bool", "true",
           "Weights may be replicated for free (false: a memory limit forbids "
           "replicas, so they are charged like activations)">,
    Option<"stateCap", "state-cap", "int64_t", "131072",
           "The most search states kept per step">,
    Option<"searchBudget", "search-budget", "int64_t", "10000000",
           "The most state expansions the search spends raising its cap "
           "from 4096 toward state-cap (0: state-cap from the start)">,
    Option<"hierarchical", "hierarchical", "bool", "true",
           "On a topology of several nodes, plan the cut across nodes first "
           "and refine it within nodes (false: one flat search over every "
           "device)">,
    Option<"weighNodes", "weigh-nodes", "bool", "true",
           "On a topology of several nodes, count a byte moved between nodes "
           "by how much slower their links are than a GPU's inside its node "
           "(false: every byte alike)">,
    Option<"bytesPerFlop", "bytes-per-flop", "double", "-1",
           "Bytes one FLOP of the busiest GPU is worth (default: devices x "
           "395 GB/s over 750 TFLOP/s, the H200)">,
    Option<"compute", "compute", "std::string", "\"flops\"",
           "What the compute term charges for the slowest join block of "
           "each op: flops (its FLOP count at the chip's gemm rate) or "
           "kernels (its time by the chip's measured gemm and attention "
           "tables, the others at HBM bandwidth: planner::blockSeconds; "
           "ein-compile --target=cuda's default)">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark per op with its spec and cost terms">,
    Option<"allowInexact", "allow-inexact", "bool", "false",
           "Kept so that older pipelines run: when the state cap bites the "
           "best plan found is kept by default (see exact)">,
    Option<"exact", "exact", "bool", "false",
           "When the state cap bites, fail (the plan would not be provably "
           "optimal) instead of keeping the best plan found with a warning "
           "that bounds its distance from the optimum">,
    Option<"tieLayout", "tie-layout", "bool", "false",
           "Each result must leave in the layout of the first activation "
           "argument of its type (so stacked blocks compose); the move is "
           "charged to the result's producer">,
    Option<"strategy", "strategy", "std::string", "\"optimal\"",
           "Which plans the search may choose: optimal (every legal spec), "
           "random (one spec per op drawn from `seed`), dp (only the input's "
           "batch dimension cut), megatron (weights sharded column- or "
           "row-wise, attention by heads), spatial (convolutions and "
           "pooling cut by output rows and columns, with halos) or "
           "megatron-dp (on several nodes: megatron within a node, data "
           "parallel across nodes)">,
    Option<"seed", "seed", "uint64_t", "0",
           "The seed of strategy=random">,
    Option<"memoryLimit", "memory-limit", "int64_t", "0",
           "Bytes a GPU may hold (0: no limit): weights plus peak live "
           "activations under the plan's cuts (planner::planMemory). When the "
           "best plan exceeds it, the search charges weight replicas, then "
           "tries Megatron-style sharding; no plan that exceeds it is kept">,
    Option<"explain", "explain", "std::string", "\"\"",
           "Explain the plan: a JSON file (docs/explain.md), a .trace.json "
           "file (the simulated step as Chrome trace events), or - for a "
           "table on standard output">,
    Option<"explainExchange", "explain-exchange", "std::string",
           "\"synthesized\"",
           "The exchange programs the explanation simulates: synthesized "
           "(as ein-synthesize-exchanges' default) or naive">,
    Option<"batchTransfers", "batch-transfers", "bool", "true",
           "Whether the synthesized exchanges the explanation and remarks "
           "simulate batch transfers (as ein-synthesize-exchanges' "
           "batch-transfers)">,
    Option<"pipeline", "pipeline", "bool", "true",
           "On a topology of several nodes, the explanation also prices "
           "pipeline stages (consecutive ops on node groups, micro-batches "
           "over the batch) against the plan (docs/distributed.md)">,
    Option<"maxMicroBatches", "max-micro-batches", "int64_t", "16",
           "The most micro-batches the priced pipelines cut the batch into">,
    Option<"stages", "stages", "std::string", "\"off\"",
           "The plan to lower: off (the intra-op plan), auto (the fastest of "
           "it, the priced pipelines on several nodes and the chunked plans, "
           "by the simulator), SxM (S >= 2 stages over M micro-batches, on "
           "several nodes) or 1xM (one stage, the batch in M chunks, or "
           "the sequence for a batch of 1, a dataflow program; 1x1: the plan itself as a dataflow program, "
           "not rewritten); a staged or chunked plan is rewritten into "
           "micro-batch copies with `ein.place` on every op "
           "(docs/distributed.md, docs/physical.md)">,
    Option<"progressSeconds", "progress-seconds", "double", "3",
           "A search that runs longer prints a progress line on standard "
           "error (nodes placed, states kept, the cheapest cost so far) "
           "every this many seconds; 0 prints one after every step">,
  ];
}

def EinDeviceBlocks : Pass<"ein-device-blocks", "::mlir::ModuleOp"> {
  let summary = "One GPU's share of a plan as a one-device program of its "
                "join blocks";
  let description = [{
    Rewrites every function of a planned logical program (ein-decompose's
    output: a `spec` on every op) into the join blocks one GPU runs, as a
    logical program for one device, so that the compute a plan gives a GPU
    can be compiled and timed on one GPU (`bench/device_blocks.py`):
    `device=N` takes join block N of every op (an op cut into fewer blocks
    leaves that GPU nothing), `device=-1` (the default) each op's slowest
    block by `planner::blockSeconds` (of blocks predicted alike, the one of
    most FLOPs), the block the compute term charges.
    Each block is the op cloned onto its block's operands, told where it
    sits as ein-synthesize-exchanges tells it (attention's causal offsets
    and group share, a convolution's padding and groups, a gather's rows),
    except a
    join-agg's loop offsets, which a logical program does not carry: one
    that reads its position through `ein.index` computes as if its block
    sat at the origin (the same work, other values). It reads
    its producer's block where that block is exactly what it reads (and not
    a partial sum), otherwise a new argument of the block's shape; what no
    block reads is returned. Slices and concats move data only and are left
    out. The function gets `ein.block_flops` and `ein.block_seconds`: the
    sums of the chosen blocks' FLOPs and predicted seconds. The module's
    `#ein.target` is dropped (the result is compiled for one device).

    ```
    ein-opt --ein-attach-target=devices=8 --ein-import --ein-fuse-composites \
      --ein-decompose --ein-device-blocks block.mlir
    ```
  }];
  let dependentDialects = ["::mlir::ein::EinDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"device", "device", "int64_t", "-1",
           "The GPU whose blocks to keep, or -1 for each op's slowest block">,
  ];
}

def EinInsertExchanges : Pass<"ein-insert-exchanges", "::mlir::ModuleOp"> {
  let summary = "Rewrite a decomposed program into relations with explicit exchanges";
  let description = [{
    Takes a logical program whose ops carry specs (`ein-decompose`) and
    rewrites every op onto relations cut as its spec dictates: each input
    relation is cut by the parts of its loops with one replica per join
    block that reads a block, and each result holds its aggregation fan-in
    as pending partials in the accumulator type. Where a producer's relation
    differs from what a consumer needs, an `ein.repartition` moves it (and
    aggregates pending partials); function arguments and tensor constants
    enter through `ein.partition`, results leave through `ein.assemble`. The
    function's signature is unchanged.
  }];
  let dependentDialects = ["::mlir::ein::EinDialect"];
}

def EinSynthesizeExchanges
    : Pass<"ein-synthesize-exchanges", "::mlir::ModuleOp"> {
  let summary = "Lower a planned program to per-GPU blocks and exchanges";
  let description = [{
    Takes the planned form (`ein-plan`: ops on relations with specs) and
    lowers it to the device level: join block k of every op runs on GPU k as
    an op on tensors marked `device = k` (join-aggs also carry their blocks'
    `loop_offsets`, attention its shifted query and key offsets); the data
    movement becomes `ein.transfer`s of exactly the regions each GPU lacks
    and `ein.aggregate`s of partials at each output block's owner. Function
    arguments enter as placed relations (`ein.partition`, then
    `ein.extract_block` per block: the input layout a runtime scatters),
    results leave through `ein.from_blocks` and `ein.assemble`.

    With `exchange=naive` (the default) the movement is the naive
    exchange program of the physical optimizer (docs/physical.md): every
    block a join reads is assembled at its canonical GPU (the lowest join
    block reading it) from the producer's blocks, sent whole to the other
    join blocks reading it, and partials go to their block's owner; its
    bytes are the proxy's terms. An activation argument arrives in the
    layout its first reader needs; replicable weights and constants arrive
    where every reader needs them. With `exchange=synthesized` the same
    movement is synthesized for the target's topology: transfers relay
    (`via`) where that is faster, blocks several join blocks read travel
    down multicast trees, and partials combine in aggregation trees that end
    at the owner; of the naive and the synthesized program, the one the
    simulator finds faster is lowered (trees pay a latency a level, which
    small blocks do not earn back), so synthesis never slows a step; then,
    op by op, the other form is kept wherever the step simulates faster
    (the report's `form` says `naive`, `synthesized` or `mixed`, and
    `synthesized_ops` how many ops are synthesized).

    Where weights move with the plan (`weights-replicable=false`) and a
    weight of 1 MiB or more is read whole by every block of its first
    reader (data parallelism), synthesis also tries it split evenly over
    those GPUs along its largest dimension, each GPU gathering the rest from
    all of them at once instead of receiving it whole from the first: the
    same bytes over every GPU's links, and each GPU holds a share. The
    split is kept, for all such weights of a function at once, where the
    step simulates faster.

    Synthesis also places the join blocks (`place-blocks`, on by default):
    op by op, the blocks go to the GPUs that receive their inputs soonest
    from where the producers' blocks sit (an exact matching, then swaps
    tried on the simulator), and a change is kept only where the step
    simulates faster, so block k of an op may run on a GPU other than k.
    A function marked `ein.tie_layout` (ein-decompose with `tie-layout`)
    keeps the ops that fix its arguments' and results' layouts canonical.
    The report's `placed_ops` counts the ops moved. A stack of at least
    four identical layers is placed and formed on the stack folded to three
    layers, the layers between the second and the last taking the second's
    choices (docs/physical.md, "Identical layers, decided once"). A
    function carrying `ein.exchange_choice` (what ein-decompose chose when
    it simulated the plan for its explanation) is built from that choice,
    with no search, where its key is that of the graph, plan and options
    lowered here; the attribute is dropped either way.

    Last, transfers of one op between the same two GPUs whose sources are
    ready when that phase of the op starts (a producer's blocks, blocks the
    canonical GPU assembled, kernels' own partials) are batched, up to 16 at
    a time, where the step simulates no slower: one `ein.transfer` of
    several regions, one latency and one cross-GPU wait of the runtime's
    graph instead of one each. The report numbers each movement's `batch`.

    A dataflow function (a chunked plan, `ein.dataflow`) is lowered in the
    order its simulated step runs its ops: each GPU's copy stream runs the
    transfers it receives one after another in the function's order, and
    the program's copy queues are ranked by when each transfer starts where
    any ready one may go first (physical::scheduleTransfers), so a transfer
    waiting for a kernel does not hold back one that is ready. Block kernels
    and transfers come at their simulated starts, every other op as soon as
    its operands are ready. The report gives each transfer's `copy_order`
    on its receiving GPU.

    Slices and concats (touch ops) move data only: each output block is
    assembled from the input regions it touches. Not lowered yet (a
    diagnostic names the op): attention cut along its keys, which needs the
    log-sum-exp combine of the attention kernel.

    `trace=FILE.trace.json` writes the lowered program's simulated step as
    Chrome trace events (docs/explain.md): the program the bundle runs, so
    a chunked or dataflow plan's copies and streams show as they overlap.
  }];
  let options = [
    Option<"exchange", "exchange", "std::string", "\"naive\"",
           "How data moves: naive, or synthesized for the target's topology "
           "(relays, multicast and aggregation trees)">,
    Option<"weightsReplicable", "weights-replicable", "bool", "true",
           "As ein-decompose was told: weights arrive replicated for free">,
    Option<"report", "report", "std::string", "",
           "Write the exchange report here (JSON): every transfer's op, "
           "kind, value, region, endpoints, bytes, links, simulated start "
           "and end and place on its GPU's copy stream, and the simulated "
           "step on the target's topology">,
    Option<"trace", "trace", "std::string", "",
           "Write the lowered program's simulated step here as Chrome trace "
           "events (FILE.trace.json): what the bundle runs, a dataflow "
           "program's received transfers on a GPU's second thread "
           "(ein-compile --explain=FILE.trace.json)">,
    Option<"placeBlocks", "place-blocks", "bool", "true",
           "With exchange=synthesized: place join blocks for the machine "
           "(false: block k on GPU k, as with naive exchanges)">,
    Option<"batchTransfers", "batch-transfers", "bool", "true",
           "With exchange=synthesized: batch an op's small transfers between "
           "two GPUs where the step simulates no slower (false: one "
           "transfer per region, to measure what batching saves)">,
    Option<"compute", "compute", "std::string", "\"flops\"",
           "How the simulator that places blocks and chooses each op's "
           "exchanges prices a join block: flops (at the chip's gemm rate) "
           "or kernels (by the measured tables, as ein-decompose's "
           "compute=kernels; ein-compile passes its --compute)">,
  ];
  let dependentDialects = ["::mlir::ein::EinDialect",
                           "::mlir::tensor::TensorDialect"];
}

def EinFuseBlocks : Pass<"ein-fuse-blocks", "::mlir::ModuleOp"> {
  let summary = "Fuse each GPU's chains of elementwise blocks into their consumers";
  let description = [{
    On device-level ein (`ein-synthesize-exchanges`), a block `P` that
    aggregates nothing (`none`: elementwise maps, broadcasts, transposes) is
    fused into the one block `C` that reads it when both run on the same
    GPU, `C` reads `P`'s result one to one (every loop of `C` indexes it,
    none twice), and nothing else does. The fused block reads `P`'s inputs
    directly and computes `P`'s scalar inside `C`'s region, rounded to
    `P`'s result type as the separate block would have stored it, so the
    result is unchanged bit for bit; `ein.index` in `P` is rewritten to
    `C`'s loops and block offsets. Chains fuse transitively (SiLU, times
    up, then the residual add become one kernel), and an elementwise
    producer fuses into a reduction that consumes it (a sum of squares).

    A producer that only copies its input (a transpose) also fuses into a
    consumer that reads it more than once (a rotation reading each element
    twice), which recomputes nothing but the read; and a producer read
    through an expanding `ein.reshape` (a view) first computes the reshaped
    result itself, its inputs viewed with the split dimension split the
    same way, unless `ein.index` reads the split loop (RoPE after the head
    transpose: one kernel, not two).

    Blocks that move between GPUs, matmuls (library gemms), composites and
    values read twice are left alone. Shared by the CPU and CUDA targets:
    run it before `ein-lower-to-cpu`.

    ```
    ein-opt examples/mlp.mlir --ein-attach-target=devices=2 --ein-plan \
      --ein-synthesize-exchanges --ein-fuse-blocks
    ```
  }];
  let dependentDialects = ["::mlir::ein::EinDialect",
                           "::mlir::arith::ArithDialect"];
}

def EinFuseGemmEpilogues : Pass<"ein-fuse-gemm-epilogues", "::mlir::ModuleOp"> {
  let summary = "Fold bias adds, residual adds and activations into library gemms";
  let description = [{
    On device-level ein (after `ein-fuse-blocks`), a library-gemm block `G`
    (a matmul the bundle runs as a gemm step) whose result only one
    elementwise block `E` on the same GPU reads, one to one, becomes one
    `ein.gemm` when `E` computes `act(G + bias + addend)`: `bias` a vector
    read along the last loop, `addend` a tensor of the result's shape (a
    residual), both optional, `act` nothing, ReLU or GELU's tanh
    approximation, spelled in any of the ways front ends write them
    (`ein.gemm` lists the exact form). The bundle runs it as one gemm step:
    cuBLASLt's epilogue on CUDA, the gemm loop on the CPU, accumulating in
    f32 and rounding once (`E` rounded the gemm's result before adding, so
    the fused result is as close to the program's value or closer).

    Blocks with other inputs, other functions (GELU's erf form, which
    cuBLASLt's epilogue does not compute), `ein.index`, gemms whose result
    is read twice or on another GPU, and result types a CUDA gemm cannot
    write are left alone. A block with an erf GELU reading a gemm gets a
    remark saying so: the epilogue computes the tanh form
    (`gelu(approximate="tanh")`); `remarks=none` silences it.

    ```
    ein-opt examples/mlp.mlir --ein-attach-target=devices=2 --ein-plan \
      --ein-synthesize-exchanges --ein-fuse-blocks --ein-fuse-gemm-epilogues
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "std::string", "\"missed\"",
           "missed: remark on a GELU after a gemm that stays a kernel "
           "because it is erf's; none">,
  ];
  let dependentDialects = ["::mlir::ein::EinDialect"];
}

def EinFoldAttentionViews : Pass<"ein-fold-attention-views", "::mlir::ModuleOp"> {
  let summary = "Let library attention read and write its operands strided, in place";
  let description = [{
    On device-level ein (after `ein-fuse-blocks`), a library attention (one
    the bundle runs as an `attention` step on `target`) that reads its query,
    key or value through copies on its GPU, a static `tensor.extract_slice`
    (the QKV split of one projection), an `ein.reshape` that splits the
    model dimension into heads, a block that only transposes (`[b, s, h, d]`
    to `[b, h, s, d]`), reads one `ein.view` of the value those copies start
    from instead: one offset and one stride per dimension. A block that only
    transposes the attention's result, and is its one reader, becomes an
    `ein.view` of it, which the attention step writes directly (its result
    stored permuted). The copies nothing else reads go.

    The bundle's attention step carries the views (`q_view` ... `o_view`,
    docs/bundle-format.md): cuDNN's fused attention reads and writes them in
    place on CUDA; the CPU backend and the runtime's own attention kernel
    gather and scatter them.

    ```
    ein-opt gpt2.mlir --ein-attach-target=devices=1 --ein-plan \
      --ein-synthesize-exchanges --ein-fuse-blocks \
      --ein-fold-attention-views=target=cuda
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "cpu or cuda: which attentions are library steps there; by "
           "default the backend the #ein.target names, else cpu (given, it "
           "must agree with the target's)">,
  ];
  let dependentDialects = ["::mlir::ein::EinDialect"];
}

def EinWriteBundle : Pass<"ein-write-bundle", "::mlir::ModuleOp"> {
  let summary = "Write a device-level program as a bundle";
  let description = [{
    Writes the device-level function (`ein-synthesize-exchanges`) as a
    bundle directory (docs/bundle-format.md) that `ein-run` runs: every
    tensor a GPU holds gets a buffer in its arena (buffers whose lives do
    not overlap share bytes; a block reshape views its source's bytes, a
    slice of a run of rows views those rows, and a block assembled from
    parts that are aligned runs of its rows has each part's buffer laid out
    as a view of them, so the part's producer writes it in place and no copy
    assembles it; a part, rows or columns, that one transfer alone brings
    and only the assembly reads lands in its region), block matmuls (two
    inputs, an add aggregation over one loop, a product join, batched or
    transposed) become `gemm` library steps, blocks with an `ein.kernel`
    (`ein-lower-to-cpu`) `kernel` steps calling `kernels/host.so`, which it
    compiles from the `@ein_kernels` module, transfers and the other local
    slices `transfer` steps, the other assemblies transfers into one
    buffer, and aggregations
    `aggregate` steps, each depending on the steps that wrote what it reads
    or overwrites. `program.json` is the `reference` program when given
    (`ein-compile` exports the logical program before planning, so `--check`
    tests the plan too), else the device-level program's math. The written
    bundle is read back with the runtime's reader: a bundle the runtime
    would refuse is an error here, and so is a buffer plan over
    `memory-limit` bytes on some device (the check `ein-compile
    --memory-limit` makes, here so that replaying its pipeline makes it too).

    ```
    ein-opt examples/matrix_chain.mlir --ein-attach-target=devices=2 \
      --ein-plan --ein-synthesize-exchanges \
      --ein-write-bundle="dir=chain target=cpu" -o /dev/null
    ein-run chain --check
    ```
  }];
  let options = [
    Option<"dir", "dir", "std::string", "\"\"", "The bundle directory to write">,
    Option<"target", "target", "std::string", "\"cpu\"",
           "cpu (host, virtual GPUs) or cuda (the target's chip); by "
           "default the backend the #ein.target names, else cpu (given, it "
           "must agree with the target's)">,
    Option<"reference", "reference", "std::string", "\"\"",
           "A program.json (ein-export-program of the logical program) to "
           "ship as the bundle's reference for --check, instead of the "
           "device-level program; its arguments and results must be the "
           "bundle's inputs and outputs">,
    Option<"memoryLimit", "memory-limit", "int64_t", "0",
           "Bytes a device's arena may take (0: no limit)">,
  ];
}

#endif // EINSUMMABLE_TRANSFORMS_PASSES_TD
