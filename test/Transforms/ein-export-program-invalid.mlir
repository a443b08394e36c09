// RUN: ein-opt %s -split-input-file --ein-export-program=%t.json -verify-diagnostics
// Naming the function to export:
// RUN: not ein-opt %s --ein-export-program="file=%t.json function=declared2" 2>&1 | FileCheck %s --check-prefix=DECLARED
// RUN: not ein-opt %s --ein-export-program="file=%t.json function=main" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not ein-opt %s --ein-export-program="function=a" 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not ein-opt %s --ein-export-program="file=%t.missing-dir/p.json function=nothing_here" 2>&1 | FileCheck %s --check-prefix=MISSING2
// DECLARED: error: 'func.func' op has no body to export
// MISSING: error: no function named 'main' to export
// NOFILE: error: ein-export-program needs file=PATH
// MISSING2: error: no function named 'nothing_here' to export

// expected-error @+1 {{the module has 2 functions with a body; name the one to export (function=NAME)}}
module {
  func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'func.func' op returns nothing; a program needs a result}}
func.func @nothing(%x: tensor<4xf32>) {
  return
}
func.func private @declared2(tensor<4xf32>) -> tensor<4xf32>

// -----

// expected-error @+1 {{'func.func' op has an argument of type '!ein.rel<4xf32, parts = [1]>'; program.json's arguments are tensors (a planned program keeps its tensor signature and cuts its arguments with ein.partition)}}
func.func @planned(%x: !ein.rel<4xf32, parts = [1]>) -> !ein.rel<4xf32, parts = [1]> {
  return %x : !ein.rel<4xf32, parts = [1]>
}

// -----

// Device-level IR exports as the math it computes; an extract_block needs a
// placed partition to say which region of which tensor it is.
func.func @block_of_blocks(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %r = ein.from_blocks %x, %y : tensor<2xf32>, tensor<2xf32> -> !ein.rel<4xf32, parts = [2], devices = [0, 1]>
  // expected-error @+1 {{has no program.json form unless it reads a placed ein.partition}}
  %b = ein.extract_block %r [1] replica 0 : !ein.rel<4xf32, parts = [2], devices = [0, 1]> -> tensor<2xf32>
  return %b : tensor<2xf32>
}

// -----

func.func @insert_into_data(%x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no program.json form unless it fills a tensor.empty with static, unit-stride slices}}
  %z = tensor.insert_slice %y into %x[0] [2] [1] : tensor<2xf32> into tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

func.func @bitcast(%x: tensor<4xf32>) -> tensor<4xi32> {
  %y = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] : tensor<4xi32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{has no program.json form; join regions may hold the arith and math operations listed in docs/program-format.md}}
    %i = arith.bitcast %v : f32 to i32
    ein.yield %i : i32
  }
  return %y : tensor<4xi32>
}

// -----

func.func @unsupported_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no program.json form; the program may hold ein.join_agg, composites, layout ops and tensor constants}}
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unfilled(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{result 0 has no program.json form (a tensor.empty nothing filled?)}}
  return %e : tensor<4xf32>
}

// -----

// expected-error @+1 {{element type 'f8E4M3FN' has no program.json form}}
func.func @element_type(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %y = ein.softmax %x dim 0 : tensor<4xf8E4M3FN>
  return %y : tensor<4xf8E4M3FN>
}

// -----

// An external function is not a candidate.
// expected-error @+1 {{the module has 0 functions with a body; name the one to export (function=NAME)}}
module {
  func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
}
