// RUN: ein-opt %s -split-input-file -ein-import | FileCheck %s
// Imported programs are valid input to the planner.
// RUN: ein-opt %s -split-input-file -ein-import -ein-attach-target=devices=4 -ein-plan -o /dev/null

// A matmul from a zero fill, then bias and ReLU: the fill (the add's
// identity) disappears, the matmul's maps give its indices, the elementwise
// body becomes the join, the outside constant comes into the region.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.empty
// CHECK: %[[M:.*]] = ein.join_agg add ins(%[[X]][d0, d2], %[[W]][d2, d1] : tensor<8x16xf32>, tensor<16x32xf32>) out[d0, d1] : tensor<8x32xf32> {
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[Q:.*]]: f32):
// CHECK-NEXT: %[[PQ:.*]] = arith.mulf %[[P]], %[[Q]] : f32
// CHECK-NEXT: ein.yield %[[PQ]] : f32
// CHECK: %[[R:.*]] = ein.join_agg none ins(%[[M]][d0, d1], %[[B]][d1] : tensor<8x32xf32>, tensor<32xf32>) out[d0, d1] : tensor<8x32xf32> {
// CHECK: arith.addf
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf %{{.*}}, %[[ZERO]] : f32
// CHECK: return %[[R]]
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<8x32xf32>, tensor<32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// A batched matmul of bf16 operands: the join computes in bf16 as the body
// does and is extended to the f32 accumulator ein keeps for bf16 results.
// CHECK-LABEL: func.func @batched_bf16
// CHECK: ein.join_agg add ins(%{{.*}}[d0, d1, d3], %{{.*}}[d0, d3, d2] : tensor<4x8x16xbf16>, tensor<4x16x8xbf16>) out[d0, d1, d2] : tensor<4x8x8xbf16> {
// CHECK: %[[PROD:.*]] = arith.mulf %{{.*}}, %{{.*}} : bf16
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[PROD]] : bf16 to f32
// CHECK-NEXT: ein.yield %[[WIDE]] : f32
func.func @batched_bf16(%a: tensor<4x8x16xbf16>, %b: tensor<4x16x8xbf16>) -> tensor<4x8x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x8x8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xbf16>, tensor<4x16x8xbf16>) outs(%z : tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
  return %r : tensor<4x8x8xbf16>
}

// -----

// A row max from -inf (the identity: dropped) and a transpose (a named op
// generalized to an elementwise copy with a permuted map).
// CHECK-LABEL: func.func @rowmax_transpose
// CHECK: %[[MAX:.*]] = ein.join_agg max ins(%{{.*}}[d0, d1] : tensor<16x32xf32>) out[d0] : tensor<16xf32>
// CHECK: ein.join_agg none ins(%{{.*}}[d1, d0] : tensor<16x32xf32>) out[d0, d1] : tensor<32x16xf32>
func.func @rowmax_transpose(%x: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<32x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x32xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %et = tensor.empty() : tensor<32x16xf32>
  %t = linalg.transpose ins(%x : tensor<16x32xf32>) outs(%et : tensor<32x16xf32>) permutation = [1, 0]
  return %m, %t : tensor<16xf32>, tensor<32x16xf32>
}

// -----

// Sums that start from something other than zero: a fill of 1 and a real
// tensor. Each becomes the sum, then one elementwise combine with the start.
// CHECK-LABEL: func.func @sum_from
// CHECK-SAME: %[[X:[^:]*]]: tensor<16x32xf32>, %[[S:[^:]*]]: tensor<16xf32>
// CHECK: %[[ONES:.*]] = ein.join_agg none ins() out[d0] : tensor<16xf32>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: ein.yield %[[ONE]]
// CHECK: %[[SUM1:.*]] = ein.join_agg add ins(%[[X]][d0, d1] : tensor<16x32xf32>) out[d0] : tensor<16xf32>
// CHECK: %[[FROM1:.*]] = ein.join_agg none ins(%[[SUM1]][d0], %[[ONES]][d0] : tensor<16xf32>, tensor<16xf32>) out[d0] : tensor<16xf32>
// CHECK: arith.addf
// CHECK: %[[SUM2:.*]] = ein.join_agg add ins(%[[X]][d0, d1] : tensor<16x32xf32>) out[d0] : tensor<16xf32>
// CHECK: %[[FROM2:.*]] = ein.join_agg none ins(%[[SUM2]][d0], %[[S]][d0] : tensor<16xf32>, tensor<16xf32>) out[d0] : tensor<16xf32>
// CHECK: return %[[FROM1]], %[[FROM2]]
func.func @sum_from(%x: tensor<16x32xf32>, %s: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x32xf32>) outs(%ones : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x32xf32>) outs(%s : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

// A causal mask from the loop indices, and an elementwise body that reads
// its output's initial value (which joins as one more input).
// CHECK-LABEL: func.func @mask_and_update
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x8xf32>, %[[Y:[^:]*]]: tensor<8x8xf32>
// CHECK: ein.join_agg none ins(%[[X]][d0, d1] : tensor<8x8xf32>) out[d0, d1]
// CHECK: %[[I:.*]] = ein.index 0 : index
// CHECK: %[[J:.*]] = ein.index 1 : index
// CHECK: arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK: arith.select
// CHECK: ein.join_agg none ins(%[[X]][d0, d1], %[[Y]][d0, d1] : tensor<8x8xf32>, tensor<8x8xf32>) out[d0, d1]
// CHECK: arith.subf
func.func @mask_and_update(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %r = arith.select %keep, %v, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%y : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.subf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %m, %u : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// linalg.reduce and linalg.broadcast, named ops with regions and maps of
// their own, generalize like the others.
// CHECK-LABEL: func.func @reduce_broadcast
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>, %[[V:[^:]*]]: tensor<16xf32>
// CHECK: ein.join_agg add ins(%[[X]][d0, d1] : tensor<8x16xf32>) out[d0] : tensor<8xf32>
// CHECK: ein.join_agg none ins(%[[V]][d1] : tensor<16xf32>) out[d0, d1] : tensor<8x16xf32>
func.func @reduce_broadcast(%x: tensor<8x16xf32>, %v: tensor<16xf32>) -> (tensor<8xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%z : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %e2 = tensor.empty() : tensor<8x16xf32>
  %b = linalg.broadcast ins(%v : tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) dimensions = [0]
  return %r, %b : tensor<8xf32>, tensor<8x16xf32>
}

// -----

// RoPE's rotate-half as slices, a negation and a concat: ein's layout ops,
// one for one; a reshape there and back cancels.
// CHECK-LABEL: func.func @rotate_half
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>
// CHECK: %[[LO:.*]] = ein.slice %[[X]] [0, 0] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK: %[[HI:.*]] = ein.slice %[[X]] [0, 8] [8, 8] : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK: %[[NEG:.*]] = ein.join_agg none ins(%[[HI]][d0, d1] : tensor<8x8xf32>) out[d0, d1]
// CHECK: arith.negf
// CHECK: %[[CAT:.*]] = ein.concat dim 1 %[[NEG]], %[[LO]] : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x16xf32>
// CHECK-NOT: ein.reshape
// CHECK: return %[[CAT]]
func.func @rotate_half(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %lo = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %hi = tensor.extract_slice %x[0, 8] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%hi : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8x8xf32>
  %cat = tensor.concat dim(1) %neg, %lo : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %up = tensor.expand_shape %cat [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  %down = tensor.collapse_shape %up [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  return %down : tensor<8x16xf32>
}

// -----

// GQA: query head h reads KV head h floordiv 4. The head loop splits into
// KV head (d0) and group (a new loop, d4); q and the scores are reshaped
// around the join, and linalg.index 0 becomes d0 * 4 + d4.
// CHECK-LABEL: func.func @gqa_scores
// CHECK-SAME: %[[Q:[^:]*]]: tensor<8x4x16xf32>, %[[K:[^:]*]]: tensor<2x6x16xf32>
// CHECK: %[[QG:.*]] = ein.reshape %[[Q]] {{\[\[}}0, 1], [2], [3]] : tensor<8x4x16xf32> -> tensor<2x4x4x16xf32>
// CHECK: %[[S:.*]] = ein.join_agg add ins(%[[QG]][d0, d4, d1, d3], %[[K]][d0, d2, d3] : tensor<2x4x4x16xf32>, tensor<2x6x16xf32>) out[d0, d4, d1, d2] : tensor<2x4x4x6xf32>
// CHECK: %[[H:.*]] = ein.index 0 : index
// CHECK: %[[G:.*]] = ein.index 4 : index
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[HG:.*]] = arith.muli %[[H]], %[[FOUR]] : index
// CHECK: arith.addi %[[HG]], %[[G]] : index
// CHECK-NOT: ein.join_agg none
// CHECK: %[[R:.*]] = ein.reshape %[[S]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x4x6xf32> -> tensor<8x4x6xf32>
// CHECK: return %[[R]]
func.func @gqa_scores(%q: tensor<8x4x16xf32>, %k: tensor<2x6x16xf32>) -> tensor<8x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4x6xf32>) -> tensor<8x4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, i, j, d) -> (h, i, d)>, affine_map<(h, i, j, d) -> (h floordiv 4, j, d)>, affine_map<(h, i, j, d) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<8x4x16xf32>, tensor<2x6x16xf32>) outs(%z : tensor<8x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %h = linalg.index 0 : index
    %hf = arith.index_cast %h : index to i64
    %hs = arith.sitofp %hf : i64 to f32
    %p = arith.mulf %a, %b : f32
    %ps = arith.addf %p, %hs : f32
    %r = arith.addf %acc, %ps : f32
    linalg.yield %r : f32
  } -> tensor<8x4x6xf32>
  return %s : tensor<8x4x6xf32>
}

// -----

// A generic with no input that yields a constant, and one that computes
// from its loop index alone.
// CHECK-LABEL: func.func @constants
// CHECK: ein.join_agg none ins() out[d0] : tensor<4xf32> {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: ein.yield %[[ONE]] : f32
// CHECK: ein.join_agg none ins() out[d0] : tensor<4xf32> {
// CHECK-NEXT: %[[I:.*]] = ein.index 0 : index
func.func @constants() -> (tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// linalg.softmax is decomposed upstream: a max from NaN with maxnumf (NaN
// is its identity, so the start is dropped), exp(x - max), a sum, a
// division.
// CHECK-LABEL: func.func @named_softmax
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK: %[[M:.*]] = ein.join_agg max ins(%[[X]][d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32>
// CHECK-NOT: arith.maximumf
// CHECK: %[[E:.*]] = ein.join_agg none ins(%[[X]][d0, d1], %[[M]][d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1]
// CHECK: math.exp
// CHECK: %[[S:.*]] = ein.join_agg add ins(%[[E]][d0, d1] : tensor<4x8xf32>) out[d0]
// CHECK: ein.join_agg none ins(%[[E]][d0, d1], %[[S]][d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1]
// CHECK: arith.divf
func.func @named_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A max reduction starting from a tensor of NaN combines the start with
// its own combine: maxnumf, which ignores the NaN (maximumf would return
// NaN everywhere).
// CHECK-LABEL: func.func @maxnum_from_nan
// CHECK: %[[M:.*]] = ein.join_agg max
// CHECK: ein.join_agg none ins(%[[M]][d0], %{{.*}}[d0]
// CHECK: arith.maxnumf
// CHECK-NOT: arith.maximumf
func.func @maxnum_from_nan(%x: tensor<4x8xf32>, %start: tensor<4xf32>) -> tensor<4xf32> {
  %m = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%start : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maxnumf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %m : tensor<4xf32>
}

// -----

// linalg.contract, linalg.elementwise and linalg.map generalize like the
// other named ops.
// CHECK-LABEL: func.func @contract_elementwise_map
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<6x8xf32>, %[[C:[^:]*]]: tensor<4x6xf32>
// CHECK: %[[M:.*]] = ein.join_agg add ins(%[[A]][d0, d2], %[[B]][d1, d2] : tensor<4x8xf32>, tensor<6x8xf32>) out[d0, d1]
// CHECK: arith.mulf
// CHECK: ein.join_agg none ins(%[[M]][d0, d1], %[[C]][d0, d1] : tensor<4x6xf32>, tensor<4x6xf32>) out[d0, d1]
// CHECK: arith.addf
// CHECK: ein.join_agg none ins(%[[C]][d0, d1] : tensor<4x6xf32>) out[d0, d1]
// CHECK: math.exp
func.func @contract_elementwise_map(%a: tensor<4x8xf32>, %b: tensor<6x8xf32>, %c: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %m = linalg.contract indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>] ins(%a, %b : tensor<4x8xf32>, tensor<6x8xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.elementwise kind=#linalg.elementwise_kind<add> ins(%m, %c : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.map { math.exp } ins(%c : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>)
  return %s, %x : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// Elementwise fusion: x * x into the sum that alone reads it, and the
// chain mean / eps / rsqrt / times x / times w / tanh into one join (the
// tanh then hides the RMSNorm from ein-fuse-composites). The elementwise
// producer of a matmul operand stays apart: the matmul keeps its plain
// product.
// CHECK-LABEL: func.func @fused_chains
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[B:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[SS:.*]] = ein.join_agg add ins(%[[X]][d0, d1] : tensor<4x8xf32>) out[d0]
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT: ein.yield %[[SQ]]
// CHECK: %[[Y:.*]] = ein.join_agg none ins(%[[X]][d0, d1], %[[SS]][d0], %[[W]][d1] : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) out[d0, d1]
// CHECK: math.rsqrt
// CHECK: math.tanh
// CHECK: ein.join_agg add ins(%[[Y]][d0, d2], %[[B]][d2, d1] : tensor<4x8xf32>, tensor<8x8xf32>) out[d0, d1]
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[Q:.*]]: f32):
// CHECK-NEXT: %[[PQ:.*]] = arith.mulf %[[P]], %[[Q]] : f32
// CHECK-NEXT: ein.yield %[[PQ]]
#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @fused_chains(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%z1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%ss : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.divf %a, %n : f32
    %p = arith.addf %m, %eps : f32
    %q = math.rsqrt %p : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #col, #rows], iterator_types = ["parallel", "parallel"]} ins(%x, %r, %w : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %g: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %t = arith.mulf %m, %g : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%t, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %mm : tensor<4x8xf32>
}

// -----

// A rank-reducing slice: a slice, then a reshape dropping the unit
// dimension.
// CHECK-LABEL: func.func @rank_reducing_slice
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[S:.*]] = ein.slice %[[X]] [2, 0] [1, 8] : tensor<8x8xf32> -> tensor<1x8xf32>
// CHECK: %[[R:.*]] = ein.reshape %[[S]] {{\[\[}}0, 1]] : tensor<1x8xf32> -> tensor<8xf32>
// CHECK: return %[[R]]
func.func @rank_reducing_slice(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %s = tensor.extract_slice %x[2, 0] [1, 8] [1, 1] : tensor<8x8xf32> to tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// insert_slice: the destination before the inserted range, the range (the
// source filled in along the next dimension) and the rest, concatenated.
// CHECK-LABEL: func.func @insert_slice
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>, %[[Y:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[TOP:.*]] = ein.slice %[[Y]] [0, 0] [2, 8] : tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK: %[[BAND:.*]] = ein.slice %[[Y]] [2, 0] [4, 8] : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[LEFT:.*]] = ein.slice %[[BAND]] [0, 0] [4, 1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: %[[RIGHT:.*]] = ein.slice %[[BAND]] [0, 4] [4, 4] : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK: %[[ROW:.*]] = ein.concat dim 1 %[[LEFT]], %[[X]], %[[RIGHT]] : tensor<4x1xf32>, tensor<4x3xf32>, tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK: %[[BOTTOM:.*]] = ein.slice %[[Y]] [6, 0] [2, 8] : tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK: %[[R:.*]] = ein.concat dim 0 %[[TOP]], %[[ROW]], %[[BOTTOM]] : tensor<2x8xf32>, tensor<4x8xf32>, tensor<2x8xf32> -> tensor<8x8xf32>
// CHECK: return %[[R]]
func.func @insert_slice(%x: tensor<4x3xf32>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = tensor.insert_slice %x into %y[2, 1] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Inserts that assemble a tensor from an unwritten tensor.empty: what
// they do not cover is undefined, so zeros (a join with no inputs) stand
// for it; a rank-reduced
// source gets its unit dimension back.
// CHECK-LABEL: func.func @insert_into_empty
// CHECK-SAME: %[[A:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<4xf32>
// CHECK: %[[AR:.*]] = ein.reshape %[[A]] {{\[\[}}0, 1]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK: %[[Z:.*]] = ein.join_agg none ins() out[d0, d1] : tensor<1x4xf32>
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: %[[FIRST:.*]] = ein.concat dim 0 %[[AR]], %[[Z]] : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
// CHECK: %[[BR:.*]] = ein.reshape %[[B]] {{\[\[}}0, 1]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK: %[[KEEP:.*]] = ein.slice %[[FIRST]] [0, 0] [1, 4] : tensor<2x4xf32> -> tensor<1x4xf32>
// CHECK-NOT: ein.slice
// CHECK: %[[BOTH:.*]] = ein.concat dim 0 %[[KEEP]], %[[BR]] : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
// CHECK: return %[[BOTH]]
// CHECK-NOT: tensor.
func.func @insert_into_empty(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %r0 = tensor.insert_slice %a into %e[0, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<2x4xf32>
  %r1 = tensor.insert_slice %b into %r0[1, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<2x4xf32>
  return %r1 : tensor<2x4xf32>
}

// -----

// An input that is a fill of a constant is that constant in the body: a
// scale written as a product with a filled tensor becomes x * 0.5.
// CHECK-LABEL: func.func @scale_by_fill
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK: ein.join_agg none ins(%[[X]][d0, d1] : tensor<4x8xf32>) out[d0, d1]
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[V]], %[[HALF]] : f32
// CHECK-NEXT: ein.yield %[[R]]
func.func @scale_by_fill(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.fill ins(%half : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%x, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// f16 in, f16 out: the product is widened to the f32 accumulator.
// CHECK-LABEL: func.func @matmul_f16
// CHECK: ein.join_agg add ins(%{{.*}}[d0, d2], %{{.*}}[d2, d1] : tensor<8x16xf16>, tensor<16x4xf16>) out[d0, d1] : tensor<8x4xf16>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f16
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @matmul_f16(%a: tensor<8x16xf16>, %b: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8x4xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<8x4xf16>) -> tensor<8x4xf16>
  %m = linalg.matmul ins(%a, %b : tensor<8x16xf16>, tensor<16x4xf16>) outs(%z : tensor<8x4xf16>) -> tensor<8x4xf16>
  return %m : tensor<8x4xf16>
}

// -----

// torch-mlir's keepdim form: a sum kept as [4, 1] and read back at the
// constant 0. The unit dimension is read away: the sum is [4], the
// reshapes it needed cancel, and the division reads it directly.
// CHECK-LABEL: func.func @keepdim
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK: %[[S:.*]] = ein.join_agg add ins(%[[X]][d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32>
// CHECK: ein.join_agg none ins(%[[X]][d0, d1], %[[S]][d0] : tensor<4x8xf32>, tensor<4xf32>) out[d0, d1]
// CHECK: arith.divf
// CHECK-NOT: ein.reshape
func.func @keepdim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%z : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A mask computed from its indices, fused into the op that adds it:
// elementwise fusion remaps the producer's linalg.index through the
// consumer's map (an affine.apply of one loop index), which imports as the
// consumer's own ein.index.
// CHECK-LABEL: func.func @index_mask_fused
// CHECK-NOT: affine.apply
// CHECK: ein.join_agg none ins(%{{.*}}[d0, d1, d2] : tensor<2x8x8xf32>) out[d0, d1, d2]
// CHECK-DAG: ein.index 1
// CHECK-DAG: ein.index 2
// CHECK: arith.cmpi sgt
// CHECK-NOT: affine.apply
func.func @index_mask_fused(%x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %e = tensor.empty() : tensor<2x8x8xf32>
  %mask = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %above = arith.cmpi sgt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %m = arith.select %above, %ninf, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mask : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.addf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// -----

// An embedding lookup as front ends write it (torch-mlir, the einsummable
// front end): the index read, cast, and the row extracted from the table.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x8xi64>, %[[TABLE:.*]]: tensor<100x32xbf16>)
// CHECK-NEXT: %[[E:.*]] = ein.gather %[[TABLE]][%[[IDS]]] : tensor<100x32xbf16>, tensor<2x8xi64> -> tensor<2x8x32xbf16>
// CHECK-NEXT: return %[[E]]
func.func @embedding(%ids: tensor<2x8xi64>, %table: tensor<100x32xbf16>) -> tensor<2x8x32xbf16> {
  %e = tensor.empty() : tensor<2x8x32xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x8xi64>) outs(%e : tensor<2x8x32xbf16>) {
  ^bb0(%i: i64, %o: bf16):
    %row = arith.index_cast %i : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<100x32xbf16>
    linalg.yield %v : bf16
  } -> tensor<2x8x32xbf16>
  return %g : tensor<2x8x32xbf16>
}

// -----

// A convolution as torch-mlir writes one: a zero tensor.pad of the rows and
// columns, then linalg.conv_2d_nchw_fchw into the broadcast bias. The pad
// becomes the conv's padding, the bias an add after it (the init is not
// the sum's identity). bf16 throughout.
// CHECK-LABEL: func.func @conv_nchw_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x9x9xbf16>, %[[W:.*]]: tensor<8x3x3x3xbf16>, %[[B:.*]]: tensor<8xbf16>)
// CHECK: %[[BIAS:.*]] = ein.join_agg none ins(%[[B]][d1]
// CHECK: %[[C:.*]] = ein.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, layout = "nchw", pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<2x3x9x9xbf16>, tensor<8x3x3x3xbf16> -> tensor<2x8x5x5xbf16>
// CHECK: ein.join_agg none ins(%[[C]][d0, d1, d2, d3], %[[BIAS]][d0, d1, d2, d3]
// CHECK: arith.addf
// CHECK-NOT: tensor.pad
func.func @conv_nchw_bias(%x: tensor<2x3x9x9xbf16>, %w: tensor<8x3x3x3xbf16>, %b: tensor<8xbf16>) -> tensor<2x8x5x5xbf16> {
  %zero = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<2x3x9x9xbf16> to tensor<2x3x11x11xbf16>
  %e = tensor.empty() : tensor<2x8x5x5xbf16>
  %bias = linalg.broadcast ins(%b : tensor<8xbf16>) outs(%e : tensor<2x8x5x5xbf16>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : tensor<2x3x11x11xbf16>, tensor<8x3x3x3xbf16>) outs(%bias : tensor<2x8x5x5xbf16>) -> tensor<2x8x5x5xbf16>
  return %c : tensor<2x8x5x5xbf16>
}

// -----

// A grouped convolution as torch-mlir writes one: the padded input and the
// filter expanded into groups, linalg.conv_2d_ngchw_gfchw into the bias
// broadcast into groups, the result collapsed back. One ein.conv with
// `groups` on the arguments themselves (the reshapes around it cancel),
// the pad folded in (what the stride never reads of it dropped), the bias
// added after.
// CHECK-LABEL: func.func @conv_grouped
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x6x6xf32>, %[[W:.*]]: tensor<12x4x3x3xf32>, %[[B:.*]]: tensor<12xf32>)
// CHECK: %[[C:.*]] = ein.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, groups = 2 : i64, layout = "nchw", pad_high = array<i64: 0, 0>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<1x8x6x6xf32>, tensor<12x4x3x3xf32> -> tensor<1x12x3x3xf32>
// CHECK: %[[E:.*]] = ein.reshape %[[C]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x12x3x3xf32> -> tensor<1x2x6x3x3xf32>
// CHECK: %[[Y:.*]] = ein.join_agg none ins(%[[E]][d0, d1, d2, d3, d4]
// CHECK: %[[R:.*]] = ein.reshape %[[Y]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x6x3x3xf32> -> tensor<1x12x3x3xf32>
// CHECK: return %[[R]]
// CHECK-NOT: tensor.
func.func @conv_grouped(%x: tensor<1x8x6x6xf32>, %w: tensor<12x4x3x3xf32>, %b: tensor<12xf32>) -> tensor<1x12x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x6x6xf32> to tensor<1x8x8x8xf32>
  %e = tensor.empty() : tensor<1x12x3x3xf32>
  %bias = linalg.broadcast ins(%b : tensor<12xf32>) outs(%e : tensor<1x12x3x3xf32>) dimensions = [0, 2, 3]
  %xg = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 8, 8] : tensor<1x8x8x8xf32> into tensor<1x2x4x8x8xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 6, 4, 3, 3] : tensor<12x4x3x3xf32> into tensor<2x6x4x3x3xf32>
  %bg = tensor.expand_shape %bias [[0], [1, 2], [3], [4]] output_shape [1, 2, 6, 3, 3] : tensor<1x12x3x3xf32> into tensor<1x2x6x3x3xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%xg, %wg : tensor<1x2x4x8x8xf32>, tensor<2x6x4x3x3xf32>) outs(%bg : tensor<1x2x6x3x3xf32>) -> tensor<1x2x6x3x3xf32>
  %r = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x2x6x3x3xf32> into tensor<1x12x3x3xf32>
  return %r : tensor<1x12x3x3xf32>
}

// -----

// Depthwise convolutions: torch-mlir's nchw form (the filter's unit channel
// collapsed, looked through), and nhwc with an hwc filter and with an hwcm
// one (a channel multiplier): the filter regrouped to hwcf with one
// channel per group, the multiplier's result expanded back to [.., c, m].
// CHECK-LABEL: func.func @depthwise
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x7x7xf32>, %[[W:.*]]: tensor<4x1x3x3xf32>, %[[Y:.*]]: tensor<1x5x5x3xf32>, %[[V:.*]]: tensor<3x3x3xf32>, %[[U:.*]]: tensor<3x3x3x2xf32>)
// CHECK: %[[D:.*]] = ein.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, groups = 4 : i64, layout = "nchw", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : tensor<2x4x7x7xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x3x3xf32>
// CHECK: %[[V4:.*]] = ein.reshape %[[V]] {{\[\[}}0], [1], [2, 3]] : tensor<3x3x3xf32> -> tensor<3x3x1x3xf32>
// CHECK: %[[H:.*]] = ein.conv %[[Y]], %[[V4]] {dilations = array<i64: 1, 1>, groups = 3 : i64, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<1x5x5x3xf32>, tensor<3x3x1x3xf32> -> tensor<1x3x3x3xf32>
// CHECK: %[[U3:.*]] = ein.reshape %[[U]] {{\[\[}}0], [1], [2, 3]] : tensor<3x3x3x2xf32> -> tensor<3x3x6xf32>
// CHECK: %[[U4:.*]] = ein.reshape %[[U3]] {{\[\[}}0], [1], [2, 3]] : tensor<3x3x6xf32> -> tensor<3x3x1x6xf32>
// CHECK: %[[M:.*]] = ein.conv %[[Y]], %[[U4]] {dilations = array<i64: 1, 1>, groups = 3 : i64, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<1x5x5x3xf32>, tensor<3x3x1x6xf32> -> tensor<1x3x3x6xf32>
// CHECK: %[[M5:.*]] = ein.reshape %[[M]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x3x3x6xf32> -> tensor<1x3x3x3x2xf32>
// CHECK: return %[[D]], %[[H]], %[[M5]]
func.func @depthwise(%x: tensor<2x4x7x7xf32>, %w: tensor<4x1x3x3xf32>, %y: tensor<1x5x5x3xf32>, %v: tensor<3x3x3xf32>, %u: tensor<3x3x3x2xf32>) -> (tensor<2x4x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %wc = tensor.collapse_shape %w [[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
  %e = tensor.empty() : tensor<2x4x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %wc : tensor<2x4x7x7xf32>, tensor<4x3x3xf32>) outs(%f : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %e2 = tensor.empty() : tensor<1x3x3x3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %h = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %v : tensor<1x5x5x3xf32>, tensor<3x3x3xf32>) outs(%f2 : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %e3 = tensor.empty() : tensor<1x3x3x3x2xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x3x3x3x2xf32>) -> tensor<1x3x3x3x2xf32>
  %m = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %u : tensor<1x5x5x3xf32>, tensor<3x3x3x2xf32>) outs(%f3 : tensor<1x3x3x3x2xf32>) -> tensor<1x3x3x3x2xf32>
  return %d, %h, %m : tensor<2x4x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3x2xf32>
}

// -----

// Max pooling over a -inf pad, in nhwc, whose last padded row it never
// reads: ein-import keeps only the padding it reads. A zero fill as the
// sum pool's init is dropped (the identity).
// CHECK-LABEL: func.func @pools
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x8x4xf32>)
// CHECK: %[[M:.*]] = ein.pool max %[[X]] {dilations = array<i64: 1, 1>, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %[[S:.*]] = ein.pool add %[[M]] {dilations = array<i64: 2, 2>, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>, window = array<i64: 2, 2>} : tensor<1x4x4x4xf32> -> tensor<1x2x2x4xf32>
// CHECK-NEXT: return %[[S]]
func.func @pools(%x: tensor<1x8x8x4xf32>) -> tensor<1x2x2x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x8x4xf32> to tensor<1x10x10x4xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %win : tensor<1x10x10x4xf32>, tensor<3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %win2 = tensor.empty() : tensor<2x2xf32>
  %e2 = tensor.empty() : tensor<1x2x2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %s = linalg.pooling_nhwc_sum {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%m, %win2 : tensor<1x4x4x4xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %s : tensor<1x2x2x4xf32>
}

// -----

// torch-mlir's argmax: one generic with two results, the running maximum
// (maximumf) and its index (a select on cmpf ogt), from -inf and 0. Both
// read: an ein.arg_reduce for the indices and a max join-agg for the
// values.
// CHECK-LABEL: func.func @argmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>)
// CHECK-DAG: %[[I:.*]] = ein.arg_reduce max %[[X]] dim 1 : tensor<4x8xbf16> -> tensor<4xi64>
// CHECK-DAG: %[[V:.*]] = ein.join_agg max ins(%[[X]][d0, d1] : tensor<4x8xbf16>) out[d0] : tensor<4xbf16>
// CHECK: return %[[V]], %[[I]]
func.func @argmax(%x: tensor<4x8xbf16>) -> (tensor<4xbf16>, tensor<4xi64>) {
  %ninf = arith.constant 0xFF80 : bf16
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xbf16>
  %v0 = linalg.fill ins(%ninf : bf16) outs(%e : tensor<4xbf16>) -> tensor<4xbf16>
  %ei = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xbf16>) outs(%v0, %i0 : tensor<4xbf16>, tensor<4xi64>) {
  ^bb0(%in: bf16, %m: bf16, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %max = arith.maximumf %in, %m : bf16
    %gt = arith.cmpf ogt, %in, %m : bf16
    %sel = arith.select %gt, %ki, %i : i64
    linalg.yield %max, %sel : bf16, i64
  } -> (tensor<4xbf16>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xbf16>, tensor<4xi64>
}

// -----

// The einsummable front end's argmin over rows (the value a select on the
// compare too); only the indices read: no value op.
// CHECK-LABEL: func.func @argmin
// CHECK-NEXT: %[[I:.*]] = ein.arg_reduce min %{{.*}} dim 0 : tensor<6x3xf32> -> tensor<3xi64>
// CHECK-NEXT: return %[[I]]
func.func @argmin(%x: tensor<6x3xf32>) -> tensor<3xi64> {
  %inf = arith.constant 0x7F800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<3xf32>
  %v0 = linalg.fill ins(%inf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi64>
  %i0 = linalg.fill ins(%zero : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<6x3xf32>) outs(%v0, %i0 : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %k = linalg.index 0 : index
    %ki = arith.index_cast %k : index to i64
    %lt = arith.cmpf olt, %in, %m : f32
    %v = arith.select %lt, %in, %m : f32
    %sel = arith.select %lt, %ki, %i : i64
    linalg.yield %v, %sel : f32, i64
  } -> (tensor<3xf32>, tensor<3xi64>)
  return %r#1 : tensor<3xi64>
}

// -----

// A sum and a sum of squares in one generic (the results computed apart):
// one join-agg each.
// CHECK-LABEL: func.func @two_sums
// CHECK: %[[S:.*]] = ein.join_agg add ins(%{{.*}}[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32>
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: ein.yield %[[A]] : f32
// CHECK: %[[Q:.*]] = ein.join_agg add ins(%{{.*}}[d0, d1] : tensor<4x8xf32>) out[d0] : tensor<4xf32>
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[B]], %[[B]] : f32
// CHECK: return %[[S]], %[[Q]]
func.func @two_sums(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%s0, %s0 : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %s: f32, %q: f32):
    %a = arith.addf %in, %s : f32
    %sq = arith.mulf %in, %in : f32
    %b = arith.addf %sq, %q : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A tensor.pad no window reads: splats of the value before and after the
// source, concatenated along each padded dimension.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[TOP:.*]] = ein.join_agg none ins() out[d0, d1] : tensor<1x8xf32>
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: %[[BOTTOM:.*]] = ein.join_agg none ins() out[d0, d1] : tensor<2x8xf32>
// CHECK: %[[ROWS:.*]] = ein.concat dim 0 %[[TOP]], %[[X]], %[[BOTTOM]] : tensor<1x8xf32>, tensor<4x8xf32>, tensor<2x8xf32> -> tensor<7x8xf32>
// CHECK: %[[RIGHT:.*]] = ein.join_agg none ins() out[d0, d1] : tensor<7x1xf32>
// CHECK: ein.concat dim 1 %[[ROWS]], %[[RIGHT]] : tensor<7x8xf32>, tensor<7x1xf32> -> tensor<7x9xf32>
func.func @pad(%x: tensor<4x8xf32>) -> tensor<7x9xf32> {
  %half = arith.constant 0.5 : f32
  %p = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %half : f32
  } : tensor<4x8xf32> to tensor<7x9xf32>
  return %p : tensor<7x9xf32>
}

// -----

// A conv reading a pad by 1.0 (not what a convolution's padding is): the
// pad is imported on its own and the conv reads the padded tensor.
// CHECK-LABEL: func.func @conv_pad_by_one
// CHECK: %[[P:.*]] = ein.concat dim 2
// CHECK: ein.conv %[[P]], %{{.*}} {dilations = array<i64: 1, 1>, layout = "nhwc", pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<1x8x8x3xf32>
func.func @conv_pad_by_one(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x6x6x2xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x6x6x3xf32> to tensor<1x8x8x3xf32>
  %e = tensor.empty() : tensor<1x6x6x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x8x8x3xf32>, tensor<3x3x3x2xf32>) outs(%f : tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  return %c : tensor<1x6x6x2xf32>
}
