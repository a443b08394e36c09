// RUN: ein-opt %s -split-input-file -verify-diagnostics

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @head_dim_cut(%q: !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 2]>, %k: !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>) -> !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]> {
    // expected-error @+1 {{dimension 3 of input 0 may not be cut, but it is cut into 2}}
    %o = ein.attention %q, %k, %k {spec = #ein.spec<[1, 2, 1, 1, 1]>} : !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 2]>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]> -> !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>
    return %o : !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1]>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @query_heads_cut(%q: !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>, %k: !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1], replicas = 2>) -> !ein.rel<1x8x16x8xf32, parts = [1, 4, 1, 1]> {
    // expected-error @+1 {{spec cuts loops kv_head x group into 4 parts but input 0 is cut into 2 along dimension 1}}
    %o = ein.attention %q, %k, %k {group = 4 : i64, spec = #ein.spec<[1, 2, 2, 1, 1]>} : !ein.rel<1x8x16x8xf32, parts = [1, 2, 1, 1]>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1], replicas = 2>, !ein.rel<1x2x16x8xf32, parts = [1, 2, 1, 1], replicas = 2> -> !ein.rel<1x8x16x8xf32, parts = [1, 4, 1, 1]>
    return %o : !ein.rel<1x8x16x8xf32, parts = [1, 4, 1, 1]>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @weight_replicas(%x: !ein.rel<8x16xf32, parts = [4, 1]>, %w: !ein.rel<16xf32, parts = [1]>) -> !ein.rel<8x16xf32, parts = [4, 1]> {
    // expected-error @+1 {{input 1 must arrive with 4 replicas under spec #ein.spec<[4, 1]> (one per join block that reads it) but has 1}}
    %n = ein.rms_norm %x, %w eps 1.0e-5 {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>, !ein.rel<16xf32, parts = [1]>
    return %n : !ein.rel<8x16xf32, parts = [4, 1]>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 4>} {
  func.func @bias_replicas(%x: !ein.rel<8x16xf32, parts = [4, 1]>, %w: !ein.rel<16xf32, parts = [1], replicas = 4>, %b: !ein.rel<16xf32, parts = [1]>) -> !ein.rel<8x16xf32, parts = [4, 1]> {
    // expected-error @+1 {{input 2 must arrive with 4 replicas under spec #ein.spec<[4, 1]> (one per join block that reads it) but has 1}}
    %n = ein.layer_norm %x weight %w bias %b eps 1.0e-5 {spec = #ein.spec<[4, 1]>} : !ein.rel<8x16xf32, parts = [4, 1]>, !ein.rel<16xf32, parts = [1], replicas = 4>, !ein.rel<16xf32, parts = [1]>
    return %n : !ein.rel<8x16xf32, parts = [4, 1]>
  }
}

// -----

func.func @mixed(%x: !ein.rel<8x16xf32, parts = [1, 1]>, %w: tensor<16xf32>) -> !ein.rel<8x16xf32, parts = [1, 1]> {
  // expected-error @+1 {{mixes tensors and relations: input 1 is 'tensor<16xf32>' but the result is '!ein.rel<8x16xf32, parts = [1, 1]>'}}
  %n = ein.rms_norm %x, %w eps 1.0e-5 {spec = #ein.spec<[1, 1]>} : !ein.rel<8x16xf32, parts = [1, 1]>, tensor<16xf32>
  return %n : !ein.rel<8x16xf32, parts = [1, 1]>
}

// -----

func.func @no_spec(%x: !ein.rel<8x16xf32, parts = [1, 1]>) -> !ein.rel<8x16xf32, parts = [1, 1]> {
  // expected-error @+1 {{operates on relations but has no spec; a planned op needs one}}
  %s = ein.softmax %x dim 1 : !ein.rel<8x16xf32, parts = [1, 1]>
  return %s : !ein.rel<8x16xf32, parts = [1, 1]>
}

// -----

func.func @touched_partial(%x: !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>) -> !ein.rel<8x4xf32, parts = [1, 1]> {
  // expected-error @+1 {{input 0 still holds pending partial<add> results; aggregate them first}}
  %s = ein.slice %x [0, 0] [8, 4] {spec = #ein.spec<[1, 1]>} : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> -> !ein.rel<8x4xf32, parts = [1, 1]>
  return %s : !ein.rel<8x4xf32, parts = [1, 1]>
}

// -----

func.func @slice_relation_shape(%x: !ein.rel<8x8xf32, parts = [1, 1]>) -> !ein.rel<8x2xf32, parts = [1, 1]> {
  // expected-error @+1 {{result must hold [8, 4] of 'f32', got '!ein.rel<8x2xf32, parts = [1, 1]>'}}
  %s = ein.slice %x [0, 0] [8, 4] {spec = #ein.spec<[1, 1]>} : !ein.rel<8x8xf32, parts = [1, 1]> -> !ein.rel<8x2xf32, parts = [1, 1]>
  return %s : !ein.rel<8x2xf32, parts = [1, 1]>
}

// -----

module attributes {ein.target = #ein.target<devices = 2, chip = "host">} {
  func.func @attention_partial_type(%q: !ein.rel<1x4x16x8xbf16, parts = [1, 1, 1, 1], replicas = 2>, %k: !ein.rel<1x4x16x8xbf16, parts = [1, 1, 2, 1]>) -> !ein.rel<1x4x16x8xbf16, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax> {
    // expected-error @+1 {{pending partials are kept in the accumulator type 'f32' but the result holds 'bf16'}}
    %o = ein.attention %q, %k, %k {spec = #ein.spec<[1, 1, 1, 1, 2]>} : !ein.rel<1x4x16x8xbf16, parts = [1, 1, 1, 1], replicas = 2>, !ein.rel<1x4x16x8xbf16, parts = [1, 1, 2, 1]>, !ein.rel<1x4x16x8xbf16, parts = [1, 1, 2, 1]> -> !ein.rel<1x4x16x8xbf16, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax>
    return %o : !ein.rel<1x4x16x8xbf16, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @conv_filter_cut(%x: !ein.rel<1x8x8x4xf32, parts = [1, 1, 1, 1]>, %w: !ein.rel<3x3x4x2xf32, parts = [1, 1, 1, 1]>) -> !ein.rel<1x8x8x2xf32, parts = [1, 1, 1, 2]> {
    // expected-error @+1 {{spec cuts loop f into 2 parts but input 1 is cut into 1 along dimension 3}}
    %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, spec = #ein.spec<[1, 1, 1, 2, 1]>} : !ein.rel<1x8x8x4xf32, parts = [1, 1, 1, 1]>, !ein.rel<3x3x4x2xf32, parts = [1, 1, 1, 1]> -> !ein.rel<1x8x8x2xf32, parts = [1, 1, 1, 2]>
    return %c : !ein.rel<1x8x8x2xf32, parts = [1, 1, 1, 2]>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @grouped_filter_uncut(%x: !ein.rel<1x4x8x8xf32, parts = [1, 1, 1, 1]>, %w: !ein.rel<4x1x3x3xf32, parts = [1, 1, 1, 1]>) -> !ein.rel<1x4x6x6xf32, parts = [1, 2, 1, 1]> {
    // expected-error @+1 {{spec cuts loops g x f into 2 parts but input 1 is cut into 1 along dimension 0}}
    %c = ein.conv %x, %w {layout = "nchw", groups = 4 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, spec = #ein.spec<[1, 1, 1, 2, 1, 1]>} : !ein.rel<1x4x8x8xf32, parts = [1, 1, 1, 1]>, !ein.rel<4x1x3x3xf32, parts = [1, 1, 1, 1]> -> !ein.rel<1x4x6x6xf32, parts = [1, 2, 1, 1]>
    return %c : !ein.rel<1x4x6x6xf32, parts = [1, 2, 1, 1]>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @arg_reduce_cut_dim(%x: !ein.rel<4x8xf32, parts = [1, 2]>) -> !ein.rel<4xi64, parts = [1], replicas = 2> {
    // expected-error @+1 {{spec #ein.spec<[1, 2]> cuts loop 'd1', which its kernel keeps whole (it reduces or normalises along it)}}
    %i = ein.arg_reduce max %x dim 1 {spec = #ein.spec<[1, 2]>} : !ein.rel<4x8xf32, parts = [1, 2]> -> !ein.rel<4xi64, parts = [1], replicas = 2>
    return %i : !ein.rel<4xi64, parts = [1], replicas = 2>
  }
}
