// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @index_lists_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 inputs but 2 index lists}}
  %r = "ein.join_agg"(%a) <{input_indices = [array<i64: 0>, array<i64: 0>], output_indices = array<i64: 0>, agg = 0 : i32}> ({
  ^bb0(%x: f32):
    ein.yield %x : f32
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @mixes_tensors_and_relations(%a: tensor<4xf32>) -> !ein.rel<4xf32, parts = [1]> {
  // expected-error @+1 {{mixes tensors and relations: input 0 is 'tensor<4xf32>' but the result is '!ein.rel<4xf32, parts = [1]>'}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] attributes {spec = #ein.spec<[1]>} : !ein.rel<4xf32, parts = [1]> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : !ein.rel<4xf32, parts = [1]>
}

// -----

func.func @rank_mismatch(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input 0 has rank 2 but its index list has 1 indices}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4x4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @result_rank_mismatch(%a: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{the result has rank 2 but its index list has 1 indices}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<4x4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @negative_index(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input 0 uses negative loop index -1}}
  %r = "ein.join_agg"(%a) <{input_indices = [array<i64: -1>], output_indices = array<i64: 0>, agg = 0 : i32}> ({
  ^bb0(%x: f32):
    ein.yield %x : f32
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @diagonal(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input 0 uses loop index d0 twice}}
  %r = ein.join_agg none ins(%a[d0, d0] : tensor<4x4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @size_conflict(%a: tensor<64x32xf32>, %b: tensor<16x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{loop index d1 has size 32 in input 0 but 16 in input 1}}
  %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xf32>, tensor<16x8xf32>) out[d0, d2] : tensor<64x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  return %c : tensor<64x8xf32>
}

// -----

func.func @result_size_conflict(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{loop index d0 has size 4 in input 0 but 5 in the result}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<5xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<5xf32>
}

// -----

func.func @sparse_indices(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{loop index d1 is never used; number loop indices densely from d0}}
  %r = ein.join_agg add ins(%a[d0, d2] : tensor<4x4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @huge_index(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{loop index d0 is never used}}
  %r = ein.join_agg none ins(%a[d99999999999] : tensor<4xf32>) out[d99999999999] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @online_softmax(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{online_softmax combines attention partials; it belongs to ein.attention, not ein.join_agg}}
  %r = ein.join_agg online_softmax ins(%a[d0, d1] : tensor<4x4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @none_with_aggregated_loop(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{aggregation 'none' but loop index d1 is not in the result; name an aggregation kind}}
  %r = ein.join_agg none ins(%a[d0, d1] : tensor<4x4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @index_result(%a: tensor<4xindex>) -> tensor<4xindex> {
  // expected-error @+1 {{result element type must be an integer or float type, got 'index'}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xindex>) out[d0] : tensor<4xindex> {
  ^bb0(%x: index):
    ein.yield %x : index
  }
  return %r : tensor<4xindex>
}

// -----

func.func @acc_class(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{accumulator type 'i32' does not suit result element type 'f32'}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] acc i32 : tensor<4xf32> {
  ^bb0(%x: f32):
    %i = arith.fptosi %x : f32 to i32
    ein.yield %i : i32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @acc_narrower(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{accumulator type 'f16' is narrower than the result element type 'f32'}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] acc f16 : tensor<4xf32> {
  ^bb0(%x: f32):
    %h = arith.truncf %x : f32 to f16
    ein.yield %h : f16
  }
  return %r : tensor<4xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @device_out_of_range(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{device 2 does not exist: the target has 2 devices}}
    %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] attributes {device = 2 : i64} : tensor<4xf32> {
    ^bb0(%x: f32):
      ein.yield %x : f32
    }
    return %r : tensor<4xf32>
  }
}

// -----

func.func @device_negative(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{device -1 is negative}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] attributes {device = -1 : i64} : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}
