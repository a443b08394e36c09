// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @spec_length(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{spec has 3 parts but the op has 2 loops}}
  %y = ein.softmax %x dim 1 {spec = #ein.spec<[1, 2, 1]>} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @over_cut(%a: tensor<2x8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{spec cuts loop 'd0' of size 2 into 4 parts}}
  %r = ein.join_agg add ins(%a[d0, d1] : tensor<2x8xf32>) out[d0] attributes {spec = #ein.spec<[4, 1]>} : tensor<2xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<2xf32>
}

// -----

func.func @attention_over_cut(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{spec cuts loop 'kv_head' of size 2 into 4 parts}}
  %o = ein.attention %q, %k, %v {group = 4 : i64, spec = #ein.spec<[1, 4, 1, 1, 1]>} : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @device_count(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
    // expected-error @+1 {{spec makes 4 join blocks but the target has 2 devices; a spec places at most one join block per device}}
    %y = ein.rms_norm %x, %w eps 1.0e-5 {spec = #ein.spec<[4, 1]>} : tensor<4x8xf32>, tensor<8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

func.func @zero_parts(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#ein.spec part 1 is 0; every loop needs at least 1 part}}
  %y = ein.softmax %x dim 1 {spec = #ein.spec<[1, 0]>} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Layout ops take specs over their loops too: a reshape's are the
// higher-rank side's dimensions, a slice's and a concat's the result's.
func.func @reshape_spec(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{spec has 1 parts but the op has 2 loops}}
  %y = ein.reshape %x [[0, 1]] {spec = #ein.spec<[2]>} : tensor<4x8xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

func.func @slice_spec(%x: tensor<8x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{spec cuts loop 'd0' of size 2 into 4 parts}}
  %y = ein.slice %x [0, 0] [2, 8] {spec = #ein.spec<[4, 1]>} : tensor<8x8xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @concat_spec(%a: tensor<8x4xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{spec makes 8 join blocks but the target has 4 devices}}
    %y = ein.concat dim 1 %a, %a {spec = #ein.spec<[4, 2]>} : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}
