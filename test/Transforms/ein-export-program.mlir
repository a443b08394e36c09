// RUN: ein-opt %s -split-input-file --ein-export-program=- -o /dev/null | FileCheck %s
// The pass leaves the IR unchanged.
// RUN: ein-opt %s -split-input-file --ein-export-program=%t.json | FileCheck %s --check-prefix=IR
// The long form of the option works too.
// RUN: ein-opt %s --ein-export-program="file=- function=layers" -o /dev/null | FileCheck %s --check-prefix=LONG
// LONG: "function": "layers",

// IR-LABEL: func.func @scores
// IR: ein.join_agg max

// A masked row max of bf16 scores: loop indices, a comparison, a -inf
// constant, a select, the f32 accumulator and the weight marker.
// CHECK-LABEL: "arguments": [
// CHECK: "name": "arg0",
// CHECK-NEXT: "type": {
// CHECK-NEXT: "dtype": "bf16",
// CHECK: "name": "arg1",
// CHECK: "weight": true
// CHECK: "function": "scores",
// CHECK-NEXT: "ops": [
// CHECK: "acc": "f32",
// CHECK-NEXT: "agg": "max",
// CHECK-NEXT: "input_indices": [
// CHECK: "join": {
// CHECK-NEXT: "args": [
// CHECK-NEXT: "bf16",
// CHECK-NEXT: "bf16"
// CHECK: "op": "arith.extf",
// CHECK: "dim": 1,
// CHECK-NEXT: "op": "ein.index",
// CHECK: "op": "arith.cmpi",
// CHECK: "predicate": "ule",
// CHECK: "op": "arith.constant",
// CHECK-NEXT: "operands": [],
// CHECK-NEXT: "type": "f32",
// CHECK-NEXT: "value": "-inf"
// CHECK: "op": "arith.select",
// CHECK: "yield": 9
// CHECK: "kind": "join_agg",
// CHECK: "output_indices": [
// CHECK-NEXT: 0
// CHECK-NEXT: ],
// CHECK-NEXT: "result": "v0",
// CHECK: "results": [
// CHECK-NEXT: "v0"
// CHECK: "version": 1
func.func @scores(%s: tensor<4x4xbf16>, %b: tensor<4x4xbf16> {ein.weight}) -> tensor<4xbf16> {
  %m = ein.join_agg max ins(%s[d0, d1], %b[d0, d1] : tensor<4x4xbf16>, tensor<4x4xbf16>) out[d0] : tensor<4xbf16> {
  ^bb0(%x: bf16, %y: bf16):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %v = arith.addf %xf, %yf : f32
    %i = ein.index 0 : index
    %j = ein.index 1 : index
    %visible = arith.cmpi ule, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %visible, %v, %ninf : f32
    ein.yield %r : f32
  }
  return %m : tensor<4xbf16>
}

// -----

// Composites and layout ops; attention's default scale is written out.
// CHECK-LABEL: "function": "layers"
// CHECK: "causal": true,
// CHECK-NEXT: "group": 2,
// CHECK-NEXT: "inputs": [
// CHECK-NEXT: "arg0",
// CHECK-NEXT: "arg1",
// CHECK-NEXT: "arg1"
// CHECK-NEXT: ],
// CHECK-NEXT: "key_offset": 0,
// CHECK-NEXT: "kind": "attention",
// CHECK-NEXT: "query_offset": 0,
// CHECK-NEXT: "result": "v0",
// CHECK-NEXT: "scale": 0.25,
// CHECK: "kind": "reshape",
// CHECK-NEXT: "reassociation": [
// CHECK-NEXT: [
// CHECK-NEXT: 0,
// CHECK-NEXT: 1
// CHECK: "kind": "softmax",
// CHECK: "eps": 1.0000000000000001e-05,
// CHECK: "kind": "rms_norm",
// CHECK: "kind": "slice",
// CHECK-NEXT: "offsets": [
// CHECK: "dim": 1,
// CHECK: "kind": "concat",
// CHECK: "kind": "constant",
// CHECK: "values": [
// CHECK-NEXT: 5
// CHECK-NEXT: ]
func.func @layers(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %w: tensor<16xf32>) -> (tensor<32x16xf32>, tensor<32x16xf32>, tensor<2x2xi32>) {
  %o = ein.attention %q, %k, %k {causal, group = 2 : i64} : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  %f = ein.reshape %o [[0, 1, 2], [3]] : tensor<1x4x8x16xf32> -> tensor<32x16xf32>
  %s = ein.softmax %f dim 1 : tensor<32x16xf32>
  %n = ein.rms_norm %s, %w eps 1.0e-5 : tensor<32x16xf32>, tensor<16xf32>
  %lo = ein.slice %n [0, 0] [32, 8] : tensor<32x16xf32> -> tensor<32x8xf32>
  %c = ein.concat dim 1 %lo, %lo : tensor<32x8xf32>, tensor<32x8xf32> -> tensor<32x16xf32>
  %k5 = arith.constant dense<5> : tensor<2x2xi32>
  return %f, %c, %k5 : tensor<32x16xf32>, tensor<32x16xf32>, tensor<2x2xi32>
}

// -----

// i1 constants are written as 0 and 1.
// CHECK-LABEL: "function": "flags"
// CHECK: "kind": "constant",
// CHECK: "values": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 0
// CHECK-NEXT: ]
func.func @flags() -> tensor<2xi1> {
  %f = arith.constant dense<[true, false]> : tensor<2xi1>
  return %f : tensor<2xi1>
}

// -----

// A grouped convolution carries its `groups`; an ungrouped one none.
// CHECK-LABEL: "function": "convs",
// CHECK: "groups": 4,
// CHECK-NEXT: "inputs": [
// CHECK-NEXT: "arg0",
// CHECK-NEXT: "arg1"
// CHECK: "kind": "conv",
// CHECK-NOT: "groups"
// CHECK: "results": [
func.func @convs(%x: tensor<1x8x6x6xf32>, %w: tensor<8x2x3x3xf32>, %v: tensor<4x8x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %g = ein.conv %x, %w {layout = "nchw", groups = 4 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : tensor<1x8x6x6xf32>, tensor<8x2x3x3xf32> -> tensor<1x8x6x6xf32>
  %p = ein.conv %g, %v {layout = "nchw", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32> -> tensor<1x4x6x6xf32>
  return %p : tensor<1x4x6x6xf32>
}
