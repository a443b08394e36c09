//===- EinOps.td - ein operations ---------------------------*- tablegen -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINOPS_TD
#define EINSUMMABLE_DIALECT_EIN_IR_EINOPS_TD

include "Einsummable/Dialect/Ein/IR/EinDialect.td"
include "Einsummable/Dialect/Ein/IR/EinAttrs.td"
include "Einsummable/Dialect/Ein/IR/EinTypes.td"
include "Einsummable/Dialect/Ein/IR/EinInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Ein_RegionListAttr
    : TypedArrayAttrBase<DenseI64ArrayAttr, "one list per region">;
def Ein_IndexListsAttr
    : TypedArrayAttrBase<DenseI64ArrayAttr, "one loop-index list per input">;
def Ein_ReassociationAttr
    : TypedArrayAttrBase<I64ArrayAttr, "groups of dimensions">;

//===----------------------------------------------------------------------===//
// Join-agg
//===----------------------------------------------------------------------===//

def Ein_JoinAggOp : Ein_Op<"join_agg", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects, Ein_BlockKernel,
    DeclareOpInterfaceMethods<Ein_SpecOpInterface, ["getLoopSizes", "getLoopNames"]>]> {
  let summary = "A join followed by an aggregation";
  let description = [{
    `out[I_out] = AGG over I_agg of JOIN(in_1[I_1], ..., in_k[I_k])`.

    Every operand and the result carry a list of loop indices `d0, d1, ...`
    (numbered densely from `d0`). Input tuples whose shared indices match are
    joined: the region computes one scalar from one element of each input
    (it may read the loop indices with `ein.index`, for masks). Loops that do
    not appear in the result are aggregated with `agg` (`add`, `max`, `min`,
    `mul`); `none` allows no aggregated loop.

    The region yields a value of the accumulator type: `acc` when given,
    otherwise f32 for f16 and bf16 results and the result element type for
    the rest. Partial outputs move and aggregate in that type; the final
    result is rounded to the result element type.

    On tensors the op is logical, or, with `device`, a block kernel on one
    GPU. On relations it is planned: it needs a `spec`, every input must
    arrive cut as the spec dictates with as many replicas as the join needs,
    and the result holds the aggregation fan-in as pending partials.

    Example: a matmul, then the same matmul planned as a 3-D matmul on 8 GPUs.

    ```mlir
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xf32>, tensor<32x16xf32>) out[d0, d2] : tensor<64x16xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }

    %p = ein.join_agg add ins(%ra[d0, d1], %rb[d1, d2] : !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    ```
  }];
  let arguments = (ins
    Variadic<Ein_AnyTensorOrRelation>:$inputs,
    Ein_IndexListsAttr:$input_indices,
    DenseI64ArrayAttr:$output_indices,
    Ein_AggKind:$agg,
    OptionalAttr<TypeAttr>:$acc,
    OptionalAttr<Ein_SpecAttr>:$spec,
    OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let regions = (region SizedRegion<1>:$join);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The loop indices of input `i`.
    ::llvm::ArrayRef<int64_t> getIndicesOfInput(unsigned i);
    /// The number of loops: one more than the largest index used.
    int64_t getNumLoops();
    /// The accumulator type: `acc` if set, else the default for the result.
    ::mlir::Type getAccType();
    /// Loops that are aggregated (absent from the result), ascending.
    ::llvm::SmallVector<int64_t> getAggregatedLoops();
    /// Where a device-level block starts in each loop (`ein.loop_offsets`),
    /// zeros when it has none.
    ::llvm::SmallVector<int64_t> getBlockOffsets();
  }];
}

def Ein_YieldOp : Ein_Op<"yield", [Pure, Terminator, HasParent<"JoinAggOp">]> {
  let summary = "Yields the joined scalar of an ein.join_agg region";
  let description = [{
    ```mlir
    ein.yield %m : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Ein_IndexOp : Ein_Op<"index", [Pure]> {
  let summary = "The current value of a loop index inside a join region";
  let description = [{
    Reads loop `dim` of the enclosing `ein.join_agg`, in global coordinates
    (a block kernel sees the index of the whole tensor, not of its block), as
    `linalg.index` does. Used for masks.

    ```mlir
    %i = ein.index 0 : index
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

// `overrides` names the SpecOpInterface methods with a default that the op
// defines itself.
class Ein_CompositeOp<string mnemonic, list<Trait> traits = [],
                      list<string> overrides = []>
    : Ein_Op<mnemonic, !listconcat(traits, [Pure, Ein_BlockKernel,
        DeclareOpInterfaceMethods<Ein_SpecOpInterface,
          !listconcat(["getLoopSizes", "getLoopNames"], overrides)>])> {
  let hasVerifier = 1;
}

def Ein_AttentionOp : Ein_CompositeOp<"attention", [], ["getCausalMask"]> {
  let summary = "Scaled dot-product attention, optionally causal, with GQA";
  let description = [{
    `out[b, h, s, :] = softmax_t(scale * q[b, h, s, :] . k[b, h / group, t, :]) v[b, h / group, t, :]`.

    Shapes: query `[batch, heads, queries, head_dim]`, key
    `[batch, kv_heads, keys, head_dim]`, value `[batch, kv_heads, keys, value_dim]`,
    result `[batch, heads, queries, value_dim]`, with
    `heads = kv_heads x group` (grouped-query attention shares one KV head
    among `group` query heads without repeating it).

    With `causal`, query `s` sees key `t` when
    `t + key_offset <= s + query_offset`: a block of a token-split plan
    states where its queries and keys sit in the whole sequence. `scale`
    defaults to `1 / sqrt(head_dim)`.

    Loops a spec may cut: `batch`, `kv_head`, `group`, `query`, `key` (cutting
    `key` aggregates with the online-softmax combine). The head dimensions
    are never cut: the fused kernel needs whole heads.

    ```mlir
    %o = ein.attention %q, %k, %v {causal, group = 4 : i64} : tensor<1x8x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x8x128x64xbf16>
    ```
  }];
  let arguments = (ins
    Ein_AnyTensorOrRelation:$query, Ein_AnyTensorOrRelation:$key,
    Ein_AnyTensorOrRelation:$value,
    UnitAttr:$causal,
    DefaultValuedAttr<I64Attr, "1">:$group,
    OptionalAttr<F64Attr>:$scale,
    DefaultValuedAttr<I64Attr, "0">:$query_offset,
    DefaultValuedAttr<I64Attr, "0">:$key_offset,
    OptionalAttr<Ein_SpecAttr>:$spec,
    OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` qualified(type($query)) `,`
    qualified(type($key)) `,` qualified(type($value)) `->`
    qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// `scale` if set, else 1 / sqrt(head_dim).
    double getScaleOrDefault();
  }];
}

def Ein_SoftmaxOp : Ein_CompositeOp<"softmax", [SameOperandsAndResultType],
                                    ["getWholeLoops"]> {
  let summary = "Softmax along one dimension";
  let description = [{
    `out = exp(x - max_dim(x)) / sum_dim(exp(x - max_dim(x)))`. A spec may cut
    every dimension; cutting `dim` itself turns into a reduce-then-broadcast.

    ```mlir
    %y = ein.softmax %x dim 1 : tensor<4x128xf32>
    ```
  }];
  let arguments = (ins Ein_AnyTensorOrRelation:$input, I64Attr:$dim,
                   OptionalAttr<Ein_SpecAttr>:$spec, OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = "$input `dim` $dim attr-dict `:` qualified(type($input))";
}

def Ein_RmsNormOp : Ein_CompositeOp<"rms_norm",
    [AllTypesMatch<["input", "result"]>], ["getWholeLoops"]> {
  let summary = "RMSNorm over the last dimension, times a weight";
  let description = [{
    `out[..., i] = x[..., i] / sqrt(mean_i(x^2) + eps) * weight[i]`, the mean
    taken in f32 at least.

    ```mlir
    %y = ein.rms_norm %x, %w eps 1.0e-05 : tensor<4x64xbf16>, tensor<64xbf16>
    ```
  }];
  let arguments = (ins Ein_AnyTensorOrRelation:$input,
                   Ein_AnyTensorOrRelation:$weight,
                   F64Attr:$eps,
                   OptionalAttr<Ein_SpecAttr>:$spec, OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $input `,` $weight `eps` $eps attr-dict `:` qualified(type($input)) `,`
    qualified(type($weight))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight, "double":$eps), [{
      build($_builder, $_state, input.getType(), input, weight,
            $_builder.getF64FloatAttr(eps), nullptr, nullptr);
    }]>];
}

def Ein_LayerNormOp : Ein_CompositeOp<"layer_norm",
    [AllTypesMatch<["input", "result"]>, AttrSizedOperandSegments],
    ["getWholeLoops"]> {
  let summary = "LayerNorm over the last dimension, optionally scaled and shifted";
  let description = [{
    `out[..., i] = (x[..., i] - m) / sqrt(v + eps) * weight[i] + bias[i]`,
    with `m` and `v` the mean and (biased) variance of `x[..., :]`, taken in
    f32 at least. The weight and the bias are optional (PyTorch's
    `elementwise_affine=False`, `bias=False`); a bias needs a weight.

    ```mlir
    %y = ein.layer_norm %x weight %w bias %b eps 1.0e-05
        : tensor<4x64xbf16>, tensor<64xbf16>, tensor<64xbf16>
    %z = ein.layer_norm %x eps 1.0e-05 : tensor<4x64xf32>
    ```
  }];
  let arguments = (ins Ein_AnyTensorOrRelation:$input,
                   Optional<Ein_AnyTensorOrRelation>:$weight,
                   Optional<Ein_AnyTensorOrRelation>:$bias,
                   F64Attr:$eps,
                   OptionalAttr<Ein_SpecAttr>:$spec, OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `eps` $eps attr-dict `:`
    qualified(type($input)) (`,` qualified(type($weight))^)?
    (`,` qualified(type($bias))^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   "::mlir::Value":$bias, "double":$eps), [{
      build($_builder, $_state, input.getType(), input, weight, bias,
            $_builder.getF64FloatAttr(eps), nullptr, nullptr);
    }]>];
}

def Ein_GatherOp : Ein_CompositeOp<"gather"> {
  let summary = "Rows of a table picked by integer indices (an embedding lookup)";
  let description = [{
    `out[i..., t...] = table[idx[i...] - row_offset, t...]` where that row is
    one of the table's, else 0: the table's rows are read at data-dependent
    places. Its loops, for a spec, are the indices' dimensions, then the
    table's rows `v`, then the table's other dimensions; it is the sum over
    `v` of `idx == v ? table[v, t...] : 0`, so cutting `v` (a vocabulary-
    parallel embedding) leaves partial results that add up. `row_offset`
    is the first row a device-level block holds (0 for a whole table).
    Indices outside the table give 0 (PyTorch raises an error instead).

    ```mlir
    %e = ein.gather %table[%ids] : tensor<50257x768xbf16>, tensor<8x1024xi64> -> tensor<8x1024x768xbf16>
    ```
  }];
  let arguments = (ins Ein_AnyTensorOrRelation:$table,
                   Ein_AnyTensorOrRelation:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$row_offset,
                   OptionalAttr<Ein_SpecAttr>:$spec, OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $table `[` $indices `]` attr-dict `:` qualified(type($table)) `,`
    qualified(type($indices)) `->` qualified(type($result))
  }];
}

def Ein_ArgReduceOp : Ein_CompositeOp<"arg_reduce", [], ["getWholeLoops"]> {
  let summary = "The index of the maximum (or minimum) along one dimension";
  let description = [{
    `out[i...] = the first j with x[i..., j, ...] > every earlier element`
    along dimension `dim` (`<` for `min`), starting from -inf (+inf) at
    index 0: the first index of the maximum, NaNs skipped; 0 where no
    element is above -inf (all -inf or NaN). This is `torch.argmax` on
    finite inputs and what torch-mlir's argmax generic computes (a
    `cmpf ogt` against the running maximum). The result drops `dim` and
    holds i64 or i32 indices. Its loops are the input's dimensions; `dim`
    may not be cut.

    ```mlir
    %i = ein.arg_reduce max %logits dim 1 : tensor<16x8xbf16> -> tensor<16xi64>
    ```
  }];
  let arguments = (ins Ein_AggKind:$kind, Ein_AnyTensorOrRelation:$input,
                   I64Attr:$dim,
                   OptionalAttr<Ein_SpecAttr>:$spec, OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $kind $input `dim` $dim attr-dict `:` qualified(type($input)) `->`
    qualified(type($result))
  }];
}

def Ein_ConvOp : Ein_CompositeOp<"conv"> {
  let summary = "A 2-D convolution (cross-correlation) over a padded input";
  let description = [{
    With `layout = "nhwc"` (filter `hwcf`):
    `out[n, y, x, f] = sum over (i, j, c) of
     in[n, y * sh + i * dh - pad_low[0], x * sw + j * dw - pad_low[1], c] * w[i, j, c, f]`,
    reading 0 outside the input (the padding: `pad_low` before, `pad_high`
    after, per spatial dimension). `layout = "nchw"` (filter `fchw`) is the
    same with channels before the spatial dimensions. bf16 and f16 sums
    accumulate in f32.

    `groups` (default 1, not printed then) splits the channels as PyTorch's
    `groups` does: the input's `C = groups * Cg` channels and the filter's
    `F = groups * Fg` output channels form `groups` groups, and output
    channel `f` sums over the `Cg` input channels of its group `f / Fg`
    only. The filter holds `Cg` input channels: `fchw` is
    `[F, Cg, kh, kw]`, `hwcf` is `[kh, kw, Cg, F]`. A depthwise convolution
    is `groups = C` (`Cg = 1`; `Fg` output channels per input channel).

    Its loops, for a spec, are `n, oh, ow, f, c`: the batch, the output's
    rows and columns, its channels and the input's channels (a cut of `c`
    leaves partial sums that add). With `groups > 1` they are `n, oh, ow,
    g, f, c`: the group, then the output and input channels within a
    group. `g` is cut like a batch (each block reads its groups' input
    channels and filter rows, no partial sums); `f` or `c` can be cut only
    under a `g` cut into single groups (the planner's rule for a dimension
    spanning two loops), a device-level block holding the `groups` of its
    own channels. The filter's window stays whole. A cut of `oh` or `ow`
    makes each block read its rows or columns of the input and the halo
    its window reaches into; a device-level block carries the padding of
    its own edges.

    ```mlir
    %y = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>}
        : tensor<8x56x56x64xbf16>, tensor<3x3x64x128xbf16> -> tensor<8x28x28x128xbf16>
    // Depthwise: 32 groups of one channel each.
    %d = ein.conv %x2, %w2 {layout = "nchw", groups = 32 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>}
        : tensor<2x32x16x16xf32>, tensor<32x1x3x3xf32> -> tensor<2x32x16x16xf32>
    ```
  }];
  let arguments = (ins Ein_AnyTensorOrRelation:$input,
                   Ein_AnyTensorOrRelation:$filter,
                   StrAttr:$layout,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pad_low,
                   DenseI64ArrayAttr:$pad_high,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   OptionalAttr<Ein_SpecAttr>:$spec, OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` qualified(type($input)) `,`
    qualified(type($filter)) `->` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// The element type sums move and add in: f32 for bf16 and f16.
    ::mlir::Type getAccType();
    /// The group count (the `groups` attribute, 1 when absent).
    int64_t getGroupCount() { return getGroupsAttr().getInt(); }
  }];
}

def Ein_PoolOp : Ein_CompositeOp<"pool"> {
  let summary = "2-D max or sum pooling over a padded input";
  let description = [{
    With `layout = "nhwc"`:
    `out[n, y, x, c] = AGG over (i, j) of in[n, y * sh + i * dh - pad_low[0], x * sw + j * dw - pad_low[1], c]`
    for `i < window[0]`, `j < window[1]`, with `kind` `max` or `add`; points
    in the padding are skipped (as if -inf for `max`, 0 for `add`). An
    average pool is a sum pool and a division. `layout = "nchw"` has the
    channels second.

    Its loops, for a spec, are `n, oh, ow, c`; the window stays whole, and a
    cut of `oh` or `ow` reads a halo as `ein.conv` does.

    ```mlir
    %p = ein.pool max %x {layout = "nhwc", window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>}
        : tensor<8x112x112x64xf32> -> tensor<8x56x56x64xf32>
    ```
  }];
  let arguments = (ins Ein_AggKind:$kind,
                   Ein_AnyTensorOrRelation:$input,
                   StrAttr:$layout,
                   DenseI64ArrayAttr:$window,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pad_low,
                   DenseI64ArrayAttr:$pad_high,
                   OptionalAttr<Ein_SpecAttr>:$spec, OptionalAttr<I64Attr>:$device);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $kind $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
}

//===----------------------------------------------------------------------===//
// Layout ops
//===----------------------------------------------------------------------===//

def Ein_ReshapeOp : Ein_Op<"reshape", [Pure, DeclareOpInterfaceMethods<Ein_SpecOpInterface, ["getLoopSizes", "getLoopNames"]>]> {
  let summary = "Expand or collapse dimensions";
  let description = [{
    `reassociation` groups the dimensions of the higher-rank side; each group
    becomes one dimension of the lower-rank side. The result collapses when
    its rank is lower than the operand's and expands otherwise.

    Its loops, for a spec, are the dimensions of the higher-rank side.

    On relations nothing moves: each group's cut must be an ordinary cut of
    the dimension it collapses into (its outermost dimension cut where the
    collapsed dimension's cut points fall, an inner one only under fully cut
    outer ones, such as a batch of 1). Replicas, partials and devices carry
    over.

    ```mlir
    %y = ein.reshape %x [[0, 1], [2]] : tensor<4x8x16xf32> -> tensor<32x16xf32>
    ```
  }];
  let arguments = (ins Ein_AnyTensorOrRelation:$source,
                       Ein_ReassociationAttr:$reassociation,
                       OptionalAttr<Ein_SpecAttr>:$spec);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $source $reassociation attr-dict `:` qualified(type($source)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ein_SliceOp : Ein_Op<"slice", [Pure, DeclareOpInterfaceMethods<Ein_SpecOpInterface, ["getLoopSizes", "getLoopNames"]>]> {
  let summary = "A static, unit-stride hyper-rectangle of a tensor";
  let description = [{
    A touch op: its loops, for a spec, are the result's dimensions, and under
    a plan its blocks map to the operand's by hyper-rectangle intersection.

    ```mlir
    %y = ein.slice %x [0, 4] [8, 4] : tensor<8x16xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Ein_AnyTensorOrRelation:$source,
                       DenseI64ArrayAttr:$offsets, DenseI64ArrayAttr:$sizes,
                       OptionalAttr<Ein_SpecAttr>:$spec);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    $source $offsets $sizes attr-dict `:` qualified(type($source)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ein_ConcatOp : Ein_Op<"concat", [Pure, DeclareOpInterfaceMethods<Ein_SpecOpInterface, ["getLoopSizes", "getLoopNames"]>]> {
  let summary = "Concatenate tensors along one dimension";
  let description = [{
    A touch op, like `ein.slice`: its loops are the result's dimensions.

    ```mlir
    %y = ein.concat dim 1 %a, %b : tensor<8x4xf32>, tensor<8x12xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins I64Attr:$dim, Variadic<Ein_AnyTensorOrRelation>:$inputs,
                       OptionalAttr<Ein_SpecAttr>:$spec);
  let results = (outs Ein_AnyTensorOrRelation:$result);
  let assemblyFormat = [{
    `dim` $dim $inputs attr-dict `:` qualified(type($inputs)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Logical exchanges
//===----------------------------------------------------------------------===//

def Ein_PartitionOp : Ein_Op<"partition", [Pure]> {
  let summary = "A whole tensor as it arrives cut into a relation";
  let description = [{
    How a function argument enters a plan: the tensor arrives already cut
    (free for activations in any non-overlapping partition; replicas cost
    bytes unless the argument is an `ein.weight`).

    ```mlir
    %r = ein.partition %x : tensor<64x64xf32> -> !ein.rel<64x64xf32, parts = [2, 1]>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source);
  let results = (outs Ein_RelationType:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Ein_AssembleOp : Ein_Op<"assemble", [Pure]> {
  let summary = "The whole tensor a relation holds";
  let description = [{
    How a result leaves a plan. The relation may not hold pending partials.

    ```mlir
    %x = ein.assemble %r : !ein.rel<64x64xf32, parts = [2, 1]> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Ein_RelationType:$source);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Ein_RepartitionOp : Ein_Op<"repartition", [Pure]> {
  let summary = "Move a relation into another partition";
  let description = [{
    The logical exchange between a producer's relation and the partition a
    consumer needs: re-cut, replicate, place, and aggregate pending partials.
    It cannot create partials; a partial source may stay partial only with
    the same aggregation kind. Aggregating may round from the accumulator
    type to the result's element type.

    ```mlir
    %y = ein.repartition %x : !ein.rel<64x64xf32, parts = [2, 2], replicas = 2, partial = add> -> !ein.rel<64x64xbf16, parts = [4, 1], replicas = 2>
    ```
  }];
  let arguments = (ins Ein_RelationType:$source);
  let results = (outs Ein_RelationType:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Device level
//===----------------------------------------------------------------------===//

def Ein_GemmOp : Ein_Op<"gemm", [Pure, AttrSizedOperandSegments]> {
  let summary = "A library gemm on one GPU, with its epilogue";
  let description = [{
    `out[..., i, j] = act(sum over k of op(a)[..., i, k] op(b)[..., k, j]
    + bias[j] + addend[..., i, j])` on device `device`, accumulating in f32
    and rounding once to the result's element type. `op` swaps the last two
    dimensions of an operand marked `transpose_a` or `transpose_b`; an
    operand of rank 2 is shared by every batch of the result's leading
    dimensions, one of the result's rank has them. `bias` (a vector of the
    result's last extent) and `addend` (of the result's shape) are optional
    and of the result's element type; `act` is `none`, `relu` or
    `gelu_tanh` (GELU's tanh approximation,
    `0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`).

    `ein-fuse-gemm-epilogues` makes it from a library-gemm block and the
    elementwise block that alone reads it; the bundle runs it as one gemm
    step (cuBLASLt's epilogue on CUDA), where the two were a gemm and a
    kernel that read its result back.

    ```mlir
    %h = ein.gemm gelu_tanh %x, %w bias %b on 0 : (tensor<1024x768xbf16>, tensor<768x3072xbf16>, tensor<3072xbf16>) -> tensor<1024x3072xbf16>
    %y = ein.gemm none %h, %w2 bias %b2 addend %x on 0 : (tensor<1024x3072xbf16>, tensor<3072x768xbf16>, tensor<768xbf16>, tensor<1024x768xbf16>) -> tensor<1024x768xbf16>
    ```
  }];
  let arguments = (ins Ein_GemmActivation:$activation, AnyRankedTensor:$a,
                       AnyRankedTensor:$b, Optional<AnyRankedTensor>:$bias,
                       Optional<AnyRankedTensor>:$addend,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       I64Attr:$device);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $activation $a `,` $b (`bias` $bias^)? (`addend` $addend^)? `on` $device
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ein_ViewOp : Ein_Op<"view", [Pure]> {
  let summary = "A strided view of a block, read or written in place by a library step";
  let description = [{
    `result[i_0, ..., i_n] = source[offset + i_0 strides[0] + ... + i_n
    strides[n]]`, `source` read as its elements in row-major order: a slice,
    a split or a transpose of a block (or several of them composed) as one
    offset and one stride per result dimension, in elements.

    `ein-fold-attention-views` makes it where a library attention reads its
    query, key or value through copies (the QKV split of one projection, a
    head transpose) or writes its result only to be transposed: the bundle's
    attention step then reads or writes the block in place with those strides
    (cuDNN's fused attention takes strided tensors), and the copies are gone.
    A view has a bundle form only there: read by library attention steps
    alone, or as a permutation of the dimensions of the one library
    attention's result it reads (which the step then writes permuted).

    ```mlir
    %q = ein.view %qkv offset 0 strides [1572864, 64, 2304, 1] : tensor<8x1024x2304xbf16> -> tensor<8x12x1024x64xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source, I64Attr:$offset,
                       DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `offset` $offset `strides` $strides attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ein_ExtractBlockOp : Ein_Op<"extract_block", [Pure]> {
  let summary = "One copy of one block of a placed relation";
  let description = [{
    The block with block index `block` (one entry per dimension), copy
    `replica`, as a tensor on the device the relation places it on.

    ```mlir
    %b = ein.extract_block %r [1, 0] replica 0 : !ein.rel<64x64xf32, parts = [2, 1], devices = [0, 1]> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Ein_RelationType:$source, DenseI64ArrayAttr:$block,
                       I64Attr:$replica);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source $block `replica` $replica attr-dict `:` qualified(type($source)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The device holding this copy.
    int64_t getDevice();
  }];
}

def Ein_FromBlocksOp : Ein_Op<"from_blocks", [Pure]> {
  let summary = "A placed relation from all its blocks";
  let description = [{
    Operands list every copy in the relation's order: block-major (blocks in
    row-major order of their block indices), replicas inside.

    ```mlir
    %r = ein.from_blocks %b0, %b1 : tensor<32x64xf32>, tensor<32x64xf32> -> !ein.rel<64x64xf32, parts = [2, 1], devices = [0, 1]>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$blocks);
  let results = (outs Ein_RelationType:$result);
  let assemblyFormat = "$blocks attr-dict `:` qualified(type($blocks)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Ein_TransferOp : Ein_Op<"transfer", [Pure, AttrSizedOperandSegments]> {
  let summary = "Copy regions of blocks from one GPU to another";
  let description = [{
    Copies the hyper-rectangle `offsets`/`sizes` of `source` (on device
    `from`) to device `to`. `via` relays it through intermediate GPUs in
    order, for pairs without a direct link or where a relay is faster.
    Starts after the steps named in `after`; `done` marks its completion.

    ```mlir
    %b, %t = ein.transfer %x [0, 0] [16, 64] from 0 to 3 via [1] after(%t0) : tensor<32x64xf32> -> tensor<16x64xf32>
    ```

    A batched transfer moves several regions, of one or several sources,
    between the same two GPUs at once: one result per region, in order, and
    one latency (and one cross-GPU wait of the runtime's graph) for all of
    them. `ein-synthesize-exchanges` batches small transfers of one op
    where the simulated step gets no slower.

    ```mlir
    %k, %v, %t = ein.transfer %x [0, 0] [16, 64], %y [16, 0] [16, 64] from 0 to 3 : tensor<32x64xf32>, tensor<32x64xf32> -> tensor<16x64xf32>, tensor<16x64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$sources,
                       Ein_RegionListAttr:$offsets, Ein_RegionListAttr:$sizes,
                       I64Attr:$from, I64Attr:$to,
                       OptionalAttr<DenseI64ArrayAttr>:$via,
                       Variadic<Ein_TokenType>:$deps);
  let results = (outs Variadic<AnyRankedTensor>:$results,
                      Ein_TokenType:$done);
  let assemblyFormat = [{
    custom<TransferRegions>($sources, $offsets, $sizes) `from` $from `to` $to
    (`via` $via^)? (`after` `(` $deps^ `)`)? attr-dict `:`
    qualified(type($sources)) `->` qualified(type($results))
  }];
  let extraClassDeclaration = [{
    /// How many regions it moves (one per source and per result); not
    /// getNumRegions, which counts the op's MLIR regions.
    unsigned getNumCopies() { return getSources().size(); }
    /// Region `i`'s offsets and sizes in its source.
    ::llvm::ArrayRef<int64_t> getRegionOffsets(unsigned i) {
      return ::llvm::cast<::mlir::DenseI64ArrayAttr>(getOffsets()[i])
          .asArrayRef();
    }
    ::llvm::ArrayRef<int64_t> getRegionSizes(unsigned i) {
      return ::llvm::cast<::mlir::DenseI64ArrayAttr>(getSizes()[i])
          .asArrayRef();
    }
  }];
  let hasVerifier = 1;
}

def Ein_MulticastOp : Ein_Op<"multicast", [Pure]> {
  let summary = "Copy a block from one GPU to several";
  let description = [{
    One result per destination, in the order of `to`.

    ```mlir
    %b1, %b2, %t = ein.multicast %x from 0 to [1, 2] : tensor<32x64xf32> -> tensor<32x64xf32>, tensor<32x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source, I64Attr:$from,
                       DenseI64ArrayAttr:$to, Variadic<Ein_TokenType>:$deps);
  let results = (outs Variadic<AnyRankedTensor>:$results, Ein_TokenType:$done);
  let assemblyFormat = [{
    $source `from` $from `to` $to (`after` `(` $deps^ `)`)? attr-dict `:`
    qualified(type($source)) `->` qualified(type($results))
  }];
  let hasVerifier = 1;
}

def Ein_AggregateOp : Ein_Op<"aggregate", [Pure, AttrSizedOperandSegments]> {
  let summary = "Combine partial blocks on one GPU";
  let description = [{
    Combines partials that already sit on `device` elementwise with `kind`
    (`add`, `max`, `min` or `mul`); the result may round to a narrower float
    type.

    ```mlir
    %s, %t = ein.aggregate add %p0, %p1 on 0 : tensor<32x64xf32>, tensor<32x64xf32> -> tensor<32x64xbf16>
    ```
  }];
  let arguments = (ins Ein_AggKind:$kind, Variadic<AnyRankedTensor>:$partials,
                       I64Attr:$device, Variadic<Ein_TokenType>:$deps);
  let results = (outs AnyRankedTensor:$result, Ein_TokenType:$done);
  let assemblyFormat = [{
    $kind $partials `on` $device (`after` `(` $deps^ `)`)? attr-dict `:`
    type($partials) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINOPS_TD
