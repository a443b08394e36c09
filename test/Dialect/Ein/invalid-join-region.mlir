// RUN: ein-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func @arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{join region has 2 arguments but the op has 1 inputs}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{join region argument 0 is 'f16' but input 0 holds 'f32'}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f16):
    %e = arith.extf %x : f16 to f32
    ein.yield %e : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @no_terminator(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{join region must end in ein.yield}}
  %r = "ein.join_agg"(%a) <{input_indices = [array<i64: 0>], output_indices = array<i64: 0>, agg = 0 : i32}> ({
  ^bb0(%x: f32):
    "test.end"(%x) : (f32) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @two_values(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{join region must yield exactly one value, got 2}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x, %x : f32, f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_type(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{join region yields 'bf16' but the accumulator type is 'f32'}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xbf16>) out[d0] : tensor<4xbf16> {
  ^bb0(%x: bf16):
    ein.yield %x : bf16
  }
  return %r : tensor<4xbf16>
}

// -----

func.func @yield_outside() {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{expects parent op 'ein.join_agg'}}
  ein.yield %c : f32
}

// -----

func.func @index_outside() -> index {
  // expected-error @+1 {{must be inside an ein.join_agg region}}
  %i = ein.index 0 : index
  return %i : index
}

// -----

func.func @index_out_of_range(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = ein.join_agg none ins(%a[d0, d1] : tensor<4x4xf32>) out[d0, d1] : tensor<4x4xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{reads loop index 2, but the enclosing ein.join_agg has loops d0..d1}}
    %i = ein.index 2 : index
    ein.yield %x : f32
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @index_negative(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{reads loop index -1, but the enclosing ein.join_agg has loops d0..d0}}
    %i = ein.index -1 : index
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @not_isolated(%a: tensor<4xf32>, %c: f32) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{using value defined outside the region}}
    %s = arith.addf %x, %c : f32
    ein.yield %s : f32
  }
  return %r : tensor<4xf32>
}
