// RUN: ein-opt %s -split-input-file -ein-import -verify-diagnostics

// A floordiv whose constant does not divide the loop.
func.func @floordiv_uneven(%k: tensor<4x8xf32>) -> tensor<7x8xf32> {
  %e = tensor.empty() : tensor<7x8xf32>
  // expected-error @+1 {{cannot be imported: loop d0 (extent 7) is divided by 2, which does not divide it}}
  %r = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h floordiv 2, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%k : tensor<4x8xf32>) outs(%e : tensor<7x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<7x8xf32>
  return %r : tensor<7x8xf32>
}

// -----

// Two loops divided: not supported.
func.func @floordiv_twice(%k: tensor<4x4xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  // expected-error @+1 {{cannot be imported: only one loop divided by one constant (dK floordiv c) is supported, got affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 2)>}}
  %r = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h floordiv 2, j floordiv 2)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%k : tensor<4x4xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Any other map that is not a projected permutation.
func.func @shifted(%k: tensor<9x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  // expected-error @+1 {{cannot be imported: operand 0 is indexed by affine_map<(d0, d1) -> (d0 + 1, d1)>, not by a projected permutation of the loops}}
  %r = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h + 1, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%k : tensor<9x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A reduction whose body subtracts: not a join plus an aggregation.
func.func @subtract(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{cannot be imported: its body does not yield the accumulator combined (add, mul, max or min) with a value of the inputs, so it does not split into a join and an aggregation}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.subf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// The combined value reads the accumulator too.
func.func @reads_accumulator(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{cannot be imported: the value it combines into the accumulator also reads the accumulator}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %p = arith.mulf %v, %acc : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A reduction loop that indexes the result.
func.func @reduction_in_result(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  // expected-error @+1 {{cannot be imported: loop d1 is a reduction that indexes the result}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A body that reads a value from outside that is not a constant.
func.func @captures(%x: tensor<8xf32>, %s: f32) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{cannot be imported: its body reads a value from outside that is not a constant}}
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A fill of a value only known at run time.
func.func @fill_runtime(%s: f32) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{cannot be imported: only a fill with a constant into a ranked tensor is}}
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %f : tensor<8xf32>
}

// -----

// A strided slice has no ein.slice.
func.func @strided(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{cannot be imported: ein.slice takes static offsets and sizes and unit strides}}
  %s = tensor.extract_slice %x[0, 0] [4, 8] [2, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// Nor does a strided insert.
func.func @strided_insert(%x: tensor<4x8xf32>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{cannot be imported: an inserted slice needs static offsets and sizes and unit strides}}
  %s = tensor.insert_slice %x into %y[0, 0] [4, 8] [2, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// -----

// A pad by a value that is not a constant (it depends on the position).
func.func @pad(%x: tensor<4x8xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{cannot be imported: ein takes a pad by a constant value}}
  %p = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    tensor.yield %g : f32
  } : tensor<4x8xf32> to tensor<6x8xf32>
  return %p : tensor<6x8xf32>
}

// -----

// A parallel loop that does not index the result (a broadcast written
// backwards) is not a join-agg.
func.func @parallel_not_in_result(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{cannot be imported: loop d1 is parallel but does not index the result}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Dynamic shapes: ein plans static ones.
func.func @dynamic(%x: tensor<?x8xf32>, %e: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{cannot be imported: ein needs static shapes, got 'tensor<?x8xf32>'}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// A body yielding a value from outside that is not a constant.
func.func @yields_argument(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{cannot be imported: its body yields a value from outside that is not a constant}}
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A constant index into a dimension that is not a unit one.
func.func @constant_index(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{cannot be imported: operand 0 is read at the constant 0 along a dimension that is not a unit dimension read at 0}}
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i, 0)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A single element read at constant indices (a scalar tensor).
func.func @scalar_read(%x: tensor<4xf32>, %s: tensor<1xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{cannot be imported: operand 1 is a single element read at constant indices}}
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (0)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %s : tensor<4xf32>, tensor<1xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A lookup that also computes on the row is not a plain gather: its body
// reads the table, which a join region cannot.
func.func @scaled_lookup(%ids: tensor<4xi32>, %table: tensor<10x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{cannot be imported: its body reads a value from outside that is not a constant}}
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: i32, %o: f32):
    %row = arith.index_cast %i : i32 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x8xf32>
    %two = arith.constant 2.0 : f32
    %s = arith.mulf %v, %two : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// -----

// Windowed reads that are not a 2-D convolution or pooling: a depthwise
// filter read in another order than the layout's (chw in nhwc),
func.func @depthwise_order(%x: tensor<1x8x8x4xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x6x6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x6x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  // expected-error @+1 {{cannot be imported: it reads input 0 through a window (a convolution or pooling), but its second input is neither a pooling window (indexed by the window's loops alone) nor a depthwise filter (hwc); ein imports 2-D convolutions and max/sum pooling in nhwc (filter hwcf) or nchw (filter fchw) layouts, grouped convolutions in ngchw (filter gfchw) and depthwise ones in nchw (filter chw) or nhwc (filter hwc or hwcm)}}
  %c = linalg.generic {indexing_maps = [
      affine_map<(n, y, x, c, i, j) -> (n, y + i, x + j, c)>,
      affine_map<(n, y, x, c, i, j) -> (c, i, j)>,
      affine_map<(n, y, x, c, i, j) -> (n, y, x, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x8x8x4xf32>, tensor<4x3x3xf32>) outs(%f : tensor<1x6x6x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x4xf32>
  return %c : tensor<1x6x6x4xf32>
}

// -----

// a grouped convolution in nhwgc (its gfhwc filter is no hwcf without a
// transpose),
func.func @grouped_nhwgc(%x: tensor<1x6x6x2x3xf32>, %w: tensor<2x4x3x3x3xf32>) -> tensor<1x4x4x2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x2x4xf32>) -> tensor<1x4x4x2x4xf32>
  // expected-error @+1 {{but it is a grouped convolution in nhwgc (its filter is no hwcf without a transpose; write it in ngchw, filter gfchw)}}
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x2x3xf32>, tensor<2x4x3x3x3xf32>) outs(%f : tensor<1x4x4x2x4xf32>) -> tensor<1x4x4x2x4xf32>
  return %c : tensor<1x4x4x2x4xf32>
}

// -----

// a grouped filter with its output channels before the groups (fgchw),
func.func @grouped_fgchw(%x: tensor<1x2x3x6x6xf32>, %w: tensor<4x2x3x3x3xf32>) -> tensor<1x2x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  // expected-error @+1 {{but its grouped filter is not read as gfchw}}
  %c = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x3x6x6xf32>, tensor<4x2x3x3x3xf32>) outs(%f : tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  return %c : tensor<1x2x4x4x4xf32>
}

// -----

// a window over the channels,
func.func @channel_window(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x7xf32> {
  %zero = arith.constant 0.0 : f32
  %w = tensor.empty() : tensor<2xf32>
  %e = tensor.empty() : tensor<1x4x4x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32>
  // expected-error @+1 {{but its windowed dimensions are not the rows and columns of an nhwc or nchw tensor}}
  %s = linalg.generic {indexing_maps = [affine_map<(n, h, w, c, k) -> (n, h, w, c + k)>, affine_map<(n, h, w, c, k) -> (k)>, affine_map<(n, h, w, c, k) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x4x4x8xf32>, tensor<2xf32>) outs(%f : tensor<1x4x4x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x7xf32>
  return %s : tensor<1x4x4x7xf32>
}

// -----

// a product that is not input times filter,
func.func @conv_body(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x4x4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  // expected-error @+1 {{but its body is not a sum of input times filter}}
  %c = linalg.generic {indexing_maps = [
      affine_map<(n, y, x, f, i, j, c) -> (n, y + i, x + j, c)>,
      affine_map<(n, y, x, f, i, j, c) -> (i, j, c, f)>,
      affine_map<(n, y, x, f, i, j, c) -> (n, y, x, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x2xf32>) outs(%f : tensor<1x4x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.subf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x2xf32>
  return %c : tensor<1x4x4x2xf32>
}

// -----

// and a 1-D convolution.
func.func @conv_1d(%x: tensor<1x8x3xf32>, %w: tensor<3x3x2xf32>) -> tensor<1x6x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x2xf32>) -> tensor<1x6x2xf32>
  // expected-error @+1 {{not by a projected permutation of the loops (windowed reads are imported as 2-D convolutions and poolings only, in nhwc or nchw layouts)}}
  %c = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
      ins(%x, %w : tensor<1x8x3xf32>, tensor<3x3x2xf32>) outs(%f : tensor<1x6x2xf32>) -> tensor<1x6x2xf32>
  return %c : tensor<1x6x2xf32>
}

// -----

// A two-result generic that does not start its index at 0.
func.func @argmax_start(%x: tensor<4x8xf32>) -> tensor<4xi64> {
  %ninf = arith.constant 0xFF800000 : f32
  %one = arith.constant 1 : i64
  %e = tensor.empty() : tensor<4xf32>
  %v0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%one : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  // expected-error @+1 {{cannot be imported: a generic with two results is imported as an argmax or argmin (a running maximum and its index), but it does not start from -inf and index 0}}
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%v0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %max = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ki, %i : i64
    linalg.yield %max, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#1 : tensor<4xi64>
}

// -----

// Three results that read each other's accumulators.
func.func @three_tied(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{cannot be imported: its 3 results depend on each other's accumulators; ein imports results computed apart (split into one generic each) and argmax/argmin (a running maximum and its index)}}
  %r:3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%s0, %s0, %s0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %a: f32, %b: f32, %c: f32):
    %p = arith.addf %in, %b : f32
    %q = arith.addf %in, %c : f32
    %t = arith.addf %in, %a : f32
    linalg.yield %p, %q, %t : f32, f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %r#0 : tensor<4xf32>
}
