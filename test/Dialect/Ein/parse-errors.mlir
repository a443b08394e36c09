// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @unknown_agg(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown aggregation kind 'sum'; expected none, add, max, min or mul}}
  %r = ein.join_agg sum ins(%a[d0] : tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @bad_loop_index(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected a loop index like 'd0', got 'i'}}
  %r = ein.join_agg none ins(%a[i] : tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @operand_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{number of operands and types do not match: got 1 operands and 2 types}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>, tensor<4xf32>) out[d0] : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{unknown relation field 'part'; expected parts, replicas, partial or devices}}
func.func private @field(!ein.rel<4xf32, part = [1]>)

// -----

// expected-error @+1 {{relation field 'parts' given twice}}
func.func private @twice(!ein.rel<4xf32, parts = [1], parts = [2]>)

// -----

// expected-error @+1 {{relation needs 'parts', one count per dimension}}
func.func private @no_parts(!ein.rel<4xf32, replicas = 2>)

// -----

// expected-error @+1 {{unknown partial kind 'sum'; expected add, max, min, mul or online_softmax}}
func.func private @partial_kind(!ein.rel<4xf32, parts = [1], replicas = 2, partial = sum>)

// -----

// expected-error @+1 {{unknown partial kind 'none'}}
func.func private @partial_none(!ein.rel<4xf32, parts = [1], replicas = 2, partial = none>)

// -----

// expected-error @+1 {{expected static shape}}
func.func private @dynamic(!ein.rel<?xf32, parts = [1]>)
