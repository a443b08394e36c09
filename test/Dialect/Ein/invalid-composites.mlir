// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{query must be [batch, heads, queries, head_dim], got rank 3}}
  %o = ein.attention %q, %k, %v : tensor<8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @value_rank(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{value must be [batch, kv_heads, keys, value_dim], got rank 3}}
  %o = ein.attention %q, %k, %v : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @element_types(%q: tensor<1x8x16x8xf16>, %k: tensor<1x8x16x8xbf16>, %v: tensor<1x8x16x8xf16>) -> tensor<1x8x16x8xf16> {
  // expected-error @+1 {{key element type 'bf16' differs from the query's 'f16'}}
  %o = ein.attention %q, %k, %v : tensor<1x8x16x8xf16>, tensor<1x8x16x8xbf16>, tensor<1x8x16x8xf16> -> tensor<1x8x16x8xf16>
  return %o : tensor<1x8x16x8xf16>
}

// -----

func.func @integer_attention(%q: tensor<1x8x16x8xi8>, %k: tensor<1x8x16x8xi8>, %v: tensor<1x8x16x8xi8>) -> tensor<1x8x16x8xi8> {
  // expected-error @+1 {{needs a float element type, got 'i8'}}
  %o = ein.attention %q, %k, %v : tensor<1x8x16x8xi8>, tensor<1x8x16x8xi8>, tensor<1x8x16x8xi8> -> tensor<1x8x16x8xi8>
  return %o : tensor<1x8x16x8xi8>
}

// -----

func.func @group_zero(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{group size must be at least 1, got 0}}
  %o = ein.attention %q, %k, %v {group = 0 : i64} : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @batch(%q: tensor<2x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<2x8x16x8xf32> {
  // expected-error @+1 {{query, key and value batch sizes differ: 2, 1, 1}}
  %o = ein.attention %q, %k, %v : tensor<2x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<2x8x16x8xf32>
  return %o : tensor<2x8x16x8xf32>
}

// -----

func.func @gqa_heads(%q: tensor<1x32x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x32x16x8xf32> {
  // expected-error @+1 {{query has 32 heads but key has 8 KV heads x group 2 = 16}}
  %o = ein.attention %q, %k, %v {group = 2 : i64} : tensor<1x32x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x32x16x8xf32>
  return %o : tensor<1x32x16x8xf32>
}

// -----

func.func @value_keys(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x32x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{value has 8 heads and 32 keys but key has 8 and 16}}
  %o = ein.attention %q, %k, %v : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x32x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @head_dim(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x4xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{key head_dim 4 differs from the query's 8}}
  %o = ein.attention %q, %k, %v : tensor<1x8x16x8xf32>, tensor<1x8x16x4xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @result_shape(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x4xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{result must be [batch, heads, queries, value_dim] = [1, 8, 16, 4], got [1, 8, 16, 8]}}
  %o = ein.attention %q, %k, %v : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x4xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @scale(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{scale must be positive and finite, got -1}}
  %o = ein.attention %q, %k, %v {scale = -1.0 : f64} : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @negative_offset(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{query_offset and key_offset must be non-negative, got -4 and 0}}
  %o = ein.attention %q, %k, %v {causal, query_offset = -4 : i64} : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @offset_without_causal(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{query_offset and key_offset place a causal mask; without 'causal' they must be 0}}
  %o = ein.attention %q, %k, %v {key_offset = 16 : i64} : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

func.func @softmax_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %y = ein.softmax %x dim 2 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @softmax_integer(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{needs a float element type, got 'i32'}}
  %y = ein.softmax %x dim 1 : tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

func.func @softmax_device(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{device -3 is negative}}
  %y = ein.softmax %x dim 1 {device = -3 : i64} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @rms_norm_rank0(%x: tensor<f32>, %w: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{needs an input of rank 1 or more}}
  %y = ein.rms_norm %x, %w eps 1.0e-5 : tensor<f32>, tensor<1xf32>
  return %y : tensor<f32>
}

// -----

func.func @rms_norm_integer(%x: tensor<4x8xi32>, %w: tensor<8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{needs a float element type, got 'i32'}}
  %y = ein.rms_norm %x, %w eps 1.0e-5 : tensor<4x8xi32>, tensor<8xi32>
  return %y : tensor<4x8xi32>
}

// -----

func.func @rms_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{weight must hold 8 elements of 'f32', one scale per element of the last dimension, got 'tensor<4xf32>'}}
  %y = ein.rms_norm %x, %w eps 1.0e-5 : tensor<4x8xf32>, tensor<4xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @rms_norm_eps(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{eps must be positive and finite, got 0}}
  %y = ein.rms_norm %x, %w eps 0.0 : tensor<4x8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_rank0(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{needs an input of rank 1 or more}}
  %y = ein.layer_norm %x eps 1.0e-5 : tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @layer_norm_integer(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{needs a float element type, got 'i32'}}
  %y = ein.layer_norm %x eps 1.0e-5 : tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

func.func @layer_norm_bias_alone(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has a bias but no weight; write a weight of ones, or fold the bias into the consumer}}
  %y = "ein.layer_norm"(%x, %b) <{eps = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{weight must hold 8 elements of 'f32', one per element of the last dimension, got 'tensor<4xf32>'}}
  %y = ein.layer_norm %x weight %w eps 1.0e-5 : tensor<4x8xf32>, tensor<4xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>, %b: tensor<8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{bias must hold 8 elements of 'bf16', one per element of the last dimension, got 'tensor<8xf32>'}}
  %y = ein.layer_norm %x weight %w bias %b eps 1.0e-5 : tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xf32>
  return %y : tensor<4x8xbf16>
}

// -----

func.func @layer_norm_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{eps must be positive and finite, got -1}}
  %y = ein.layer_norm %x eps -1.0 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @gather_rank0(%t: tensor<f32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{needs a table of rank 1 or more}}
  %g = ein.gather %t[%i] : tensor<f32>, tensor<4xi64> -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @gather_integer_table(%t: tensor<10x4xi32>, %i: tensor<4xi64>) -> tensor<4x4xi32> {
  // expected-error @+1 {{needs a float element type, got 'i32'}}
  %g = ein.gather %t[%i] : tensor<10x4xi32>, tensor<4xi64> -> tensor<4x4xi32>
  return %g : tensor<4x4xi32>
}

// -----

func.func @gather_float_indices(%t: tensor<10x4xf32>, %i: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{needs i64 or i32 indices, got 'f32'}}
  %g = ein.gather %t[%i] : tensor<10x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  return %g : tensor<4x4xf32>
}

// -----

func.func @gather_shape(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<6x4xf32> {
  // expected-error @+1 {{result must hold [2, 3, 4] of 'f32' (the indices' shape, then each row's), got 'tensor<6x4xf32>'}}
  %g = ein.gather %t[%i] : tensor<10x4xf32>, tensor<2x3xi64> -> tensor<6x4xf32>
  return %g : tensor<6x4xf32>
}

// -----

func.func @gather_offset(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{row_offset must not be negative, got -1}}
  %g = ein.gather %t[%i] {row_offset = -1 : i64} : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return %g : tensor<3x4xf32>
}

// -----

func.func @conv_layout(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{layout must be "nhwc" or "nchw", got "hwnc"}}
  %c = ein.conv %x, %w {layout = "hwnc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32>, tensor<3x3x3x2xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_filter_rank(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{needs a 4-D filter (hwcf), got 'tensor<3x3x3xf32>'}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32>, tensor<3x3x3xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_input_rank(%x: tensor<4x4x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{needs a 4-D input (nhwc), got 'tensor<4x4x3xf32>'}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<4x4x3xf32>, tensor<3x3x3x2xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_int(%x: tensor<1x4x4x3xi32>, %w: tensor<3x3x3x2xi32>) -> tensor<1x2x2x2xi32> {
  // expected-error @+1 {{needs a float element type, got 'i32'}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xi32>, tensor<3x3x3x2xi32> -> tensor<1x2x2x2xi32>
  return %c : tensor<1x2x2x2xi32>
}

// -----

func.func @conv_strides(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{strides needs 2 values (rows, columns), got 1}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32>, tensor<3x3x3x2xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_zero_dilation(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{dilations must be positive (and below 2^30), got [0, 1]}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 0, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32>, tensor<3x3x3x2xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_negative_pad(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{pad_low must be non-negative (and below 2^30), got [-1, 0]}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: -1, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32>, tensor<3x3x3x2xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_window_too_wide(%x: tensor<1x2x4x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{a window reaching 3 elements does not fit the rows of the padded input (2)}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x2x4x3xf32>, tensor<3x3x3x2xf32> -> tensor<1x1x2x2xf32>
  return %c : tensor<1x1x2x2xf32>
}

// -----

func.func @conv_pad_only(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x2xf32>) -> tensor<1x4x8x2xf32> {
  // expected-error @+1 {{padding of 0 before and 3 after is as wide as the window's reach (3) in the columns: some outputs would read padding only}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 3>} : tensor<1x4x4x3xf32>, tensor<3x3x3x2xf32> -> tensor<1x4x8x2xf32>
  return %c : tensor<1x4x8x2xf32>
}

// -----

func.func @conv_filter_type(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x2xbf16>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{filter must hold 'f32' as the input does, got 'tensor<3x3x3x2xbf16>'}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32>, tensor<3x3x3x2xbf16> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x4x4x4xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{filter reads 2 input channels but the input has 4 (a grouped convolution says so in `groups`)}}
  %c = ein.conv %x, %w {layout = "nhwc", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x4xf32>, tensor<3x3x2x2xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_groups_positive(%x: tensor<1x4x4x4xf32>, %w: tensor<3x3x4x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{groups must be positive, got 0}}
  %c = ein.conv %x, %w {layout = "nhwc", groups = 0 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x4xf32>, tensor<3x3x4x2xf32> -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @conv_groups_channels(%x: tensor<1x6x4x4xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{groups (4) must divide the input's 6 channels}}
  %c = ein.conv %x, %w {layout = "nchw", groups = 4 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x6x4x4xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x2x2xf32>
  return %c : tensor<1x4x2x2xf32>
}

// -----

func.func @conv_groups_features(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x2x6xf32>) -> tensor<1x2x2x6xf32> {
  // expected-error @+1 {{groups (4) must divide the filter's 6 output channels}}
  %c = ein.conv %x, %w {layout = "nhwc", groups = 4 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x8xf32>, tensor<3x3x2x6xf32> -> tensor<1x2x2x6xf32>
  return %c : tensor<1x2x2x6xf32>
}

// -----

func.func @conv_groups_filter(%x: tensor<1x8x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{filter reads 4 input channels per group but the input's 8 channels in 4 groups are 2 per group}}
  %c = ein.conv %x, %w {layout = "nchw", groups = 4 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x8x4x4xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x2x2xf32>
  return %c : tensor<1x4x2x2xf32>
}

// -----

func.func @conv_result(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{result must be 'tensor<1x2x2x2xf32>', got 'tensor<1x2x4x4xf32>'}}
  %c = ein.conv %x, %w {layout = "nchw", strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x4x4xf32>
  return %c : tensor<1x2x4x4xf32>
}

// -----

func.func @pool_kind(%x: tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32> {
  // expected-error @+1 {{pools by max or add, not mul}}
  %p = ein.pool mul %x {layout = "nhwc", window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32> -> tensor<1x2x2x3xf32>
  return %p : tensor<1x2x2x3xf32>
}

// -----

func.func @pool_window(%x: tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32> {
  // expected-error @+1 {{window needs 2 positive sizes, got [2, 0]}}
  %p = ein.pool max %x {layout = "nhwc", window = array<i64: 2, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32> -> tensor<1x2x2x3xf32>
  return %p : tensor<1x2x2x3xf32>
}

// -----

func.func @pool_result(%x: tensor<1x4x4x3xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error @+1 {{result must be 'tensor<1x2x2x3xf32>', got 'tensor<1x2x2x4xf32>'}}
  %p = ein.pool max %x {layout = "nhwc", window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x4x3xf32> -> tensor<1x2x2x4xf32>
  return %p : tensor<1x2x2x4xf32>
}

// -----

func.func @arg_reduce_kind(%x: tensor<4x8xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{finds the index of a max or min, not add}}
  %i = ein.arg_reduce add %x dim 1 : tensor<4x8xf32> -> tensor<4xi64>
  return %i : tensor<4xi64>
}

// -----

func.func @arg_reduce_dim(%x: tensor<4x8xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{dim 2 is not a dimension of its rank-2 input}}
  %i = ein.arg_reduce max %x dim 2 : tensor<4x8xf32> -> tensor<4xi64>
  return %i : tensor<4xi64>
}

// -----

func.func @arg_reduce_float_result(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result holds i64 or i32 indices, got 'f32'}}
  %i = ein.arg_reduce max %x dim 1 : tensor<4x8xf32> -> tensor<4xf32>
  return %i : tensor<4xf32>
}

// -----

func.func @arg_reduce_int_input(%x: tensor<4x8xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{needs a float element type, got 'i32'}}
  %i = ein.arg_reduce max %x dim 1 : tensor<4x8xi32> -> tensor<4xi64>
  return %i : tensor<4xi64>
}

// -----

func.func @arg_reduce_shape(%x: tensor<4x8xf32>) -> tensor<8xi64> {
  // expected-error @+1 {{result must be 'tensor<4xi64>', got 'tensor<8xi64>'}}
  %i = ein.arg_reduce max %x dim 1 : tensor<4x8xf32> -> tensor<8xi64>
  return %i : tensor<8xi64>
}
