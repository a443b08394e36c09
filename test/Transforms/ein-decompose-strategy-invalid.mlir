// RUN: ein-opt %s -split-input-file -ein-decompose=strategy=dp -verify-diagnostics
// RUN: not ein-opt %s -split-input-file -ein-decompose=strategy=megatron 2>&1 | FileCheck %s --check-prefix=MEGATRON
// RUN: not ein-opt %s -split-input-file -ein-decompose=strategy=pipeline 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not ein-opt %s -split-input-file -ein-decompose=strategy=spatial 2>&1 | FileCheck %s --check-prefix=SPATIAL
// SPATIAL: error: {{.*}}strategy spatial does not apply: the program has no convolution or pooling
// UNKNOWN: error: strategy must be optimal, random, dp, megatron, spatial or megatron-dp, got 'pipeline'
// RUN: not ein-opt %s -split-input-file -ein-decompose=strategy=megatron-dp 2>&1 | FileCheck %s --check-prefix=MEGATRONDP
// MEGATRONDP: error: {{.*}}strategy megatron-dp needs a topology of several nodes of several GPUs each (nodes=K,gpus=G with K, G >= 2), got 2 devices on 1 node(s)

// dp needs a batch dimension it can cut: a batch of 1 cannot be split.

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @batch_of_one(%x: tensor<1x8x16xf32>, %w: tensor<16x32xf32> {ein.weight}) -> tensor<1x8x32xf32> {
    // The diagnostic stands at the op it names.
    // expected-error @+1 {{'ein.join_agg' op has no plan: strategy dp does not apply: op 'ein.join_agg #0' (d0, d1, d2, d3) cannot cut its batch loops into 2 parts}}
    %h = ein.join_agg add ins(%x[d0, d1, d2], %w[d2, d3] : tensor<1x8x16xf32>, tensor<16x32xf32>) out[d0, d1, d3] : tensor<1x8x32xf32> {
    ^bb0(%a: f32, %b: f32):
      %p = arith.mulf %a, %b : f32
      ein.yield %p : f32
    }
    return %h : tensor<1x8x32xf32>
  }
}

// -----

// dp on a program none of whose ops reads the batch: a product of two
// weights (an op on weights alone is free under dp, as a training step's
// optimizer update is, but some op must cut the batch).

module attributes {ein.target = #ein.target<devices = 2>} {
  // expected-error @+1 {{'func.func' op has no plan: strategy dp does not apply: no op reads the batch (dimension 0 of the first activation argument of rank 2 or more)}}
  func.func @weights_only(%x: tensor<4x8xf32>, %a: tensor<8x8xf32> {ein.weight}, %b: tensor<8x8xf32> {ein.weight}) -> tensor<8x8xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x8xf32>, tensor<8x8xf32>) out[d0, d2] : tensor<8x8xf32> {
    ^bb0(%p: f32, %q: f32):
      %m = arith.mulf %p, %q : f32
      ein.yield %m : f32
    }
    return %c : tensor<8x8xf32>
  }
}

// -----

// megatron needs weights to shard or attention to split by heads; a matrix
// product of two activations has neither. (Under dp it splits the rows.)

// MEGATRON: error: 'func.func' op has no plan: strategy megatron does not apply: the program has neither a contraction with a weight (an argument marked ein.weight) nor attention
module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @activations(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x8xf32>, tensor<8x8xf32>) out[d0, d2] : tensor<8x8xf32> {
    ^bb0(%p: f32, %q: f32):
      %m = arith.mulf %p, %q : f32
      ein.yield %m : f32
    }
    return %c : tensor<8x8xf32>
  }
}
