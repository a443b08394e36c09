// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @extract_unplaced(%r: !ein.rel<8x8xf32, parts = [2, 1]>) -> tensor<4x8xf32> {
  // expected-error @+1 {{needs a placed relation (with devices), got '!ein.rel<8x8xf32, parts = [2, 1]>'}}
  %b = ein.extract_block %r [0, 0] replica 0 : !ein.rel<8x8xf32, parts = [2, 1]> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @extract_device_range(%r: !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 2]>) -> tensor<4x8xf32> {
    // expected-error @+1 {{relation device 2 does not exist: the target has 2 devices}}
    %b = ein.extract_block %r [0, 0] replica 0 : !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 2]> -> tensor<4x8xf32>
    return %b : tensor<4x8xf32>
  }
}

// -----

func.func @extract_block_rank(%r: !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]>) -> tensor<4x8xf32> {
  // expected-error @+1 {{block index has 1 entries for a relation of rank 2}}
  %b = ein.extract_block %r [0] replica 0 : !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

func.func @extract_block_range(%r: !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]>) -> tensor<4x8xf32> {
  // expected-error @+1 {{block index 2 in dimension 0 is outside its 2 parts}}
  %b = ein.extract_block %r [2, 0] replica 0 : !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

func.func @extract_replica(%r: !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]>) -> tensor<4x8xf32> {
  // expected-error @+1 {{replica 1 is outside the 1 replicas}}
  %b = ein.extract_block %r [1, 0] replica 1 : !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

func.func @extract_shape(%r: !ein.rel<9x8xf32, parts = [2, 1], devices = [0, 1]>) -> tensor<5x8xf32> {
  // expected-error @+1 {{block [1, 0] is 'tensor<4x8xf32>', got 'tensor<5x8xf32>'}}
  %b = ein.extract_block %r [1, 0] replica 0 : !ein.rel<9x8xf32, parts = [2, 1], devices = [0, 1]> -> tensor<5x8xf32>
  return %b : tensor<5x8xf32>
}

// -----

func.func @from_blocks_unplaced(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> !ein.rel<8x8xf32, parts = [2, 1]> {
  // expected-error @+1 {{needs a placed relation (with devices)}}
  %r = ein.from_blocks %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> !ein.rel<8x8xf32, parts = [2, 1]>
  return %r : !ein.rel<8x8xf32, parts = [2, 1]>
}

// -----

func.func @from_blocks_count(%a: tensor<4x8xf32>) -> !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]> {
  // expected-error @+1 {{the relation has 2 copies (2 blocks x 1 replicas) but 1 are given}}
  %r = ein.from_blocks %a : tensor<4x8xf32> -> !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]>
  return %r : !ein.rel<8x8xf32, parts = [2, 1], devices = [0, 1]>
}

// -----

func.func @from_blocks_shape(%a: tensor<5x8xf32>, %b: tensor<4x8xf32>) -> !ein.rel<9x8xf32, parts = [2, 1], devices = [0, 1]> {
  // expected-error @+1 {{operand 0 is block 0, which is 'tensor<5x8xf32>', got 'tensor<4x8xf32>'}}
  %r = ein.from_blocks %b, %b : tensor<4x8xf32>, tensor<4x8xf32> -> !ein.rel<9x8xf32, parts = [2, 1], devices = [0, 1]>
  return %r : !ein.rel<9x8xf32, parts = [2, 1], devices = [0, 1]>
}

// -----

func.func @transfer_rank(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{region has 1 offsets and 2 sizes for a block of rank 2}}
  %b, %t = ein.transfer %x [0] [4, 8] from 0 to 1 : tensor<8x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

func.func @transfer_bounds(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{region of size 4 at offset 6 in dimension 0 is empty or outside the block's size 8}}
  %b, %t = ein.transfer %x [6, 0] [4, 8] from 0 to 1 : tensor<8x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

func.func @transfer_result(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{result must be 'tensor<4x8xf32>', got 'tensor<4x4xf32>'}}
  %b, %t = ein.transfer %x [0, 0] [4, 8] from 0 to 1 : tensor<8x8xf32> -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @transfer_destination(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{destination device 5 does not exist: the target has 2 devices}}
    %b, %t = ein.transfer %x [0, 0] [8, 8] from 0 to 5 : tensor<8x8xf32> -> tensor<8x8xf32>
    return %b : tensor<8x8xf32>
  }
}

// -----

func.func @batch_region(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{region 1 of size 4 at offset 6 in dimension 0 is empty or outside the block's size 8}}
  %a, %b, %t = ein.transfer %x [0, 0] [4, 8], %x [6, 0] [4, 8] from 0 to 1 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

func.func @batch_result(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{result must be 'tensor<4x8xf32>', got 'tensor<8x8xf32>'}}
  %a, %b, %t = ein.transfer %x [0, 0] [8, 8], %x [4, 0] [4, 8] from 0 to 1 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>, tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}

// -----

func.func @batch_lists(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{has 2 sources but 1 offset lists, 2 size lists and 2 block results}}
  %a:3 = "ein.transfer"(%x, %x) <{from = 0 : i64, offsets = [array<i64: 0, 0>], operandSegmentSizes = array<i32: 2, 0>, sizes = [array<i64: 8, 8>, array<i64: 8, 8>], to = 1 : i64}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, !ein.token)
  return %a#0 : tensor<8x8xf32>
}

// -----

func.func @batch_results(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{has 1 sources but 1 offset lists, 1 size lists and 2 block results}}
  %a:3 = "ein.transfer"(%x) <{from = 0 : i64, offsets = [array<i64: 0, 0>], operandSegmentSizes = array<i32: 1, 0>, sizes = [array<i64: 8, 8>], to = 1 : i64}> : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, !ein.token)
  return %a#0 : tensor<8x8xf32>
}

// -----

func.func @no_region() {
  // expected-error @+1 {{moves no region}}
  %t = "ein.transfer"() <{from = 0 : i64, offsets = [], operandSegmentSizes = array<i32: 0, 0>, sizes = [], to = 1 : i64}> : () -> !ein.token
  return
}

// -----

func.func @transfer_source(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{source device -1 is negative}}
  %b, %t = ein.transfer %x [0, 0] [8, 8] from -1 to 0 : tensor<8x8xf32> -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}

// -----

func.func @transfer_to_itself(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{moves a block from device 1 to itself}}
  %b, %t = ein.transfer %x [0, 0] [8, 8] from 1 to 1 : tensor<8x8xf32> -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}

// -----

func.func @relay_repeats(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{relay visits device 3 twice (or relays through an endpoint)}}
  %b, %t = ein.transfer %x [0, 0] [8, 8] from 0 to 3 via [1, 3] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @relay_device(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{relay device 4 does not exist: the target has 4 devices}}
    %b, %t = ein.transfer %x [0, 0] [8, 8] from 0 to 3 via [4] : tensor<8x8xf32> -> tensor<8x8xf32>
    return %b : tensor<8x8xf32>
  }
}

// -----

func.func @multicast_one(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{multicast needs at least 2 destinations, got 1; use ein.transfer}}
  %b, %t = ein.multicast %x from 0 to [1] : tensor<8xf32> -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

func.func @multicast_results(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{has 3 destinations but 2 block results}}
  %b, %c, %t = ein.multicast %x from 0 to [1, 2, 3] : tensor<8xf32> -> tensor<8xf32>, tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

func.func @multicast_source(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{source device -2 is negative}}
  %b, %c, %t = ein.multicast %x from -2 to [1, 2] : tensor<8xf32> -> tensor<8xf32>, tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @multicast_destination(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{destination device 2 does not exist: the target has 2 devices}}
    %b, %c, %t = ein.multicast %x from 0 to [1, 2] : tensor<8xf32> -> tensor<8xf32>, tensor<8xf32>
    return %b : tensor<8xf32>
  }
}

// -----

func.func @multicast_repeat(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{device 0 appears twice among the source and destinations}}
  %b, %c, %t = ein.multicast %x from 0 to [1, 0] : tensor<8xf32> -> tensor<8xf32>, tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

func.func @multicast_type(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result 1 is 'tensor<4xf32>' but a multicast copies 'tensor<8xf32>' whole}}
  %b, %c, %t = ein.multicast %x from 0 to [1, 2] : tensor<8xf32> -> tensor<8xf32>, tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @aggregate_kind(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'online_softmax' is not an elementwise aggregation; expected add, max, min or mul}}
  %s, %t = ein.aggregate online_softmax %a, %b on 0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @aggregate_one(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{needs at least 2 partials, got 1}}
  %s, %t = ein.aggregate add %a on 0 : tensor<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @aggregate_partials(%a: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{partial 1 is 'tensor<4xf32>' but partial 0 is 'tensor<8xf32>'}}
  %s, %t = ein.aggregate add %a, %b on 0 : tensor<8xf32>, tensor<4xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @aggregate_shape(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result shape [4] differs from the partials' [8]}}
  %s, %t = ein.aggregate add %a, %b on 0 : tensor<8xf32>, tensor<8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @aggregate_widen(%a: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<8xf32> {
  // expected-error @+1 {{may only round partials to a float type no wider, got 'bf16' to 'f32'}}
  %s, %t = ein.aggregate add %a, %b on 0 : tensor<8xbf16>, tensor<8xbf16> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @aggregate_device(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{device 7 does not exist: the target has 2 devices}}
    %s, %t = ein.aggregate max %a, %b on 7 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    return %s : tensor<8xf32>
  }
}

// -----

func.func @gemm_mixed_operands(%a: tensor<4x8xbf16>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{multiplies float operands of one element type into a float result, got 'tensor<4x8xbf16>', 'tensor<8x4xf32>' -> 'tensor<4x4xf32>'}}
  %c = ein.gemm none %a, %b on 0 : (tensor<4x8xbf16>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

func.func @gemm_integer_result(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xi32> {
  // expected-error @+1 {{multiplies float operands of one element type into a float result}}
  %c = ein.gemm none %a, %b on 0 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xi32>
  return %c : tensor<4x4xi32>
}

// -----

func.func @gemm_vector_result(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{needs a result of rank 2 or more, got 'tensor<16xf32>'}}
  %c = ein.gemm none %a, %b on 0 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

func.func @gemm_batch_mismatch(%a: tensor<3x4x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{operand a must be a matrix or carry the result's batch dimensions [2], got 'tensor<3x4x8xf32>'}}
  %c = ein.gemm none %a, %b on 0 : (tensor<3x4x8xf32>, tensor<8x4xf32>) -> tensor<2x4x4xf32>
  return %c : tensor<2x4x4xf32>
}

// -----

func.func @gemm_shapes(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{multiplies 4x8 by 4x8 (after transposes), which does not give the result's 4x4}}
  %c = ein.gemm none %a, %b on 0 {transpose_b} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

func.func @gemm_row_bias(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %bias: tensor<4xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{bias must be a vector of 6 'f32', got 'tensor<4xf32>'}}
  %c = ein.gemm none %a, %b bias %bias on 0 : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4xf32>) -> tensor<4x6xf32>
  return %c : tensor<4x6xf32>
}

// -----

func.func @gemm_addend_type(%a: tensor<4x8xbf16>, %b: tensor<8x6xbf16>, %r: tensor<4x6xf32>) -> tensor<4x6xbf16> {
  // expected-error @+1 {{addend must have the result's type 'tensor<4x6xbf16>', got 'tensor<4x6xf32>'}}
  %c = ein.gemm none %a, %b addend %r on 0 : (tensor<4x8xbf16>, tensor<8x6xbf16>, tensor<4x6xf32>) -> tensor<4x6xbf16>
  return %c : tensor<4x6xbf16>
}

// -----

func.func @gemm_device(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{device must not be negative, got -1}}
  %c = ein.gemm none %a, %b on -1 : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %c : tensor<4x6xf32>
}

// -----

func.func @view_type(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{views elements of one type, got 'tensor<4x8xf32>' -> 'tensor<8x4xbf16>'}}
  %v = ein.view %x offset 0 strides [1, 8] : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %v : tensor<8x4xbf16>
}

// -----

func.func @view_dynamic(%x: tensor<?x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{views static shapes, got 'tensor<?x8xf32>' -> 'tensor<8x4xf32>'}}
  %v = ein.view %x offset 0 strides [1, 8] : tensor<?x8xf32> -> tensor<8x4xf32>
  return %v : tensor<8x4xf32>
}

// -----

func.func @view_rank(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{has 3 strides for a result of rank 2}}
  %v = ein.view %x offset 0 strides [1, 8, 1] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %v : tensor<8x4xf32>
}

// -----

func.func @view_negative(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{offset and strides must not be negative}}
  %v = ein.view %x offset 0 strides [-1, 8] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %v : tensor<8x4xf32>
}

// -----

func.func @view_bounds(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{reads element 32 of a source of 32 elements}}
  %v = ein.view %x offset 5 strides [8, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %v : tensor<4x4xf32>
}

// -----

func.func @view_negative_offset(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{offset and strides must not be negative}}
  %v = ein.view %x offset -1 strides [8, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %v : tensor<4x4xf32>
}

// -----

func.func @view_wraps(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{reads past the end of a source of 32 elements}}
  %v = ein.view %x offset 0 strides [9223372036854775807, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %v : tensor<4x4xf32>
}
