// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @reshape_kind(%x: tensor<4x8xf32>) -> !ein.rel<32xf32, parts = [1]> {
  // expected-error @+1 {{reshapes a relation into a relation and a tensor into a tensor, got 'tensor<4x8xf32>' to '!ein.rel<32xf32, parts = [1]>'}}
  %y = ein.reshape %x [[0, 1]] : tensor<4x8xf32> -> !ein.rel<32xf32, parts = [1]>
  return %y : !ein.rel<32xf32, parts = [1]>
}

// -----

func.func @reshape_element_type(%x: tensor<4x8xf32>) -> tensor<32xf16> {
  // expected-error @+1 {{cannot change the element type ('f32' to 'f16')}}
  %y = ein.reshape %x [[0, 1]] : tensor<4x8xf32> -> tensor<32xf16>
  return %y : tensor<32xf16>
}

// -----

func.func @reshape_group_count(%x: tensor<4x8x2xf32>) -> tensor<32x2xf32> {
  // expected-error @+1 {{reassociation has 1 groups but the lower-rank side has rank 2}}
  %y = ein.reshape %x [[0, 1, 2]] : tensor<4x8x2xf32> -> tensor<32x2xf32>
  return %y : tensor<32x2xf32>
}

// -----

func.func @reshape_empty_group(%x: tensor<4x8xf32>) -> tensor<32x1xf32> {
  // expected-error @+1 {{reassociation group 1 is empty}}
  %y = ein.reshape %x [[0, 1], []] : tensor<4x8xf32> -> tensor<32x1xf32>
  return %y : tensor<32x1xf32>
}

// -----

func.func @reshape_order(%x: tensor<4x8x2xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{reassociation must list dimensions 0..2 of the higher-rank side in order; group 0 has 1 where 0 belongs}}
  %y = ein.reshape %x [[1], [0, 2]] : tensor<4x8x2xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @reshape_elements(%x: tensor<4x8xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{group 0 covers 4 elements but dimension 0 of the lower-rank side has 16}}
  %y = ein.reshape %x [[0], [1]] : tensor<4x8xf32> -> tensor<16x2xf32>
  return %y : tensor<16x2xf32>
}

// -----

func.func @reshape_coverage(%x: tensor<4x8x1xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{reassociation covers 2 of the 3 dimensions of the higher-rank side}}
  %y = ein.reshape %x [[0, 1]] : tensor<4x8x1xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

func.func @reshape_moves_data(%x: !ein.rel<4x8xf32, parts = [2, 1], devices = [0, 1]>) -> !ein.rel<32xf32, parts = [2], devices = [1, 0]> {
  // expected-error @+1 {{moves no data: replicas, partials and devices of the result must match the source's}}
  %y = ein.reshape %x [[0, 1]] : !ein.rel<4x8xf32, parts = [2, 1], devices = [0, 1]> -> !ein.rel<32xf32, parts = [2], devices = [1, 0]>
  return %y : !ein.rel<32xf32, parts = [2], devices = [1, 0]>
}

// -----

func.func @reshape_inner_cut(%x: !ein.rel<4x8xf32, parts = [1, 2]>) -> !ein.rel<32xf32, parts = [2]> {
  // expected-error @+1 {{the cut of group 0 ([1, 2] parts of [4, 8]) is not an ordinary cut of dimension 0 of size 32}}
  %y = ein.reshape %x [[0, 1]] : !ein.rel<4x8xf32, parts = [1, 2]> -> !ein.rel<32xf32, parts = [2]>
  return %y : !ein.rel<32xf32, parts = [2]>
}

// -----

func.func @reshape_outer_parts(%x: !ein.rel<4x8xf32, parts = [4, 1]>) -> !ein.rel<32xf32, parts = [2]> {
  // expected-error @+1 {{dimension 0 of the lower-rank side is cut into 2 parts but its group into 4}}
  %y = ein.reshape %x [[0, 1]] : !ein.rel<4x8xf32, parts = [4, 1]> -> !ein.rel<32xf32, parts = [2]>
  return %y : !ein.rel<32xf32, parts = [2]>
}

// -----

// 12 in 2 parts splits at 6; 3 x 4 cut on the 3 splits at 2 x 4 = 8.
func.func @reshape_uneven(%x: !ein.rel<12xf32, parts = [2]>) -> !ein.rel<3x4xf32, parts = [2, 1]> {
  // expected-error @+1 {{the cut of group 0 ([2, 1] parts of [3, 4]) is not an ordinary cut of dimension 0 of size 12}}
  %y = ein.reshape %x [[0, 1]] : !ein.rel<12xf32, parts = [2]> -> !ein.rel<3x4xf32, parts = [2, 1]>
  return %y : !ein.rel<3x4xf32, parts = [2, 1]>
}

// -----

func.func @slice_rank(%x: tensor<8x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{slice has 1 offsets and 1 sizes for a source of rank 2}}
  %y = ein.slice %x [0] [4] : tensor<8x8xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @slice_bounds(%x: tensor<8x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{slice of size 4 at offset 6 in dimension 1 is empty or outside the source's size 8}}
  %y = ein.slice %x [0, 6] [8, 4] : tensor<8x8xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @slice_offset_overflow(%x: tensor<8x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{slice of size 4 at offset 9223372036854775806 in dimension 1 is empty or outside the source's size 8}}
  %y = ein.slice %x [0, 9223372036854775806] [8, 4] : tensor<8x8xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @slice_result(%x: tensor<8x8xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{result must be 'tensor<8x4xf32>', got 'tensor<8x2xf32>'}}
  %y = ein.slice %x [0, 0] [8, 4] : tensor<8x8xf32> -> tensor<8x2xf32>
  return %y : tensor<8x2xf32>
}

// -----

func.func @concat_none() -> tensor<8xf32> {
  // expected-error @+1 {{needs at least one input}}
  %y = "ein.concat"() <{dim = 0 : i64}> : () -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @concat_dim(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %y = ein.concat dim 1 %a : tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @concat_types(%a: tensor<8x4xf32>, %b: tensor<8x4xf16>) -> tensor<8x8xf32> {
  // expected-error @+1 {{input 1 is 'tensor<8x4xf16>', which does not concatenate with 'tensor<8x4xf32>'}}
  %y = ein.concat dim 1 %a, %b : tensor<8x4xf32>, tensor<8x4xf16> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<8x4xf32>, %b: tensor<6x4xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{input 1 has size 6 in dimension 0 but input 0 has 8}}
  %y = ein.concat dim 1 %a, %b : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @concat_result(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x9xf32> {
  // expected-error @+1 {{result must be 'tensor<8x8xf32>', got 'tensor<8x9xf32>'}}
  %y = ein.concat dim 1 %a, %b : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x9xf32>
  return %y : tensor<8x9xf32>
}
