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

// expected-error @+1 {{'func.func' op has type '!ein.rel<4xf32, parts = [1]>'; program.json describes the logical program, on ranked tensors (export before planning)}}
func.func @planned(%x: !ein.rel<4xf32, parts = [1]>) -> !ein.rel<4xf32, parts = [1]> {
  return %x : !ein.rel<4xf32, parts = [1]>
}

// -----

func.func @block_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is a device-level block kernel (device 0 : i64); program.json describes the logical program}}
  %y = ein.softmax %x dim 0 {device = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @exchange(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no program.json form}}
  %b, %t = ein.transfer %x [0] [4] from 0 to 1 : tensor<4xf32> -> tensor<4xf32>
  return %b : tensor<4xf32>
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
  %e = tensor.empty() : tensor<4xf32>
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
