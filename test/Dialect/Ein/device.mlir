// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// The device-level form of an all-reduce over 2 GPUs as explicit steps:
// split the partials, exchange halves, aggregate, and gather.
// CHECK-LABEL: func.func @reduce_scatter_gather
// CHECK: %[[P0:.*]] = ein.extract_block %[[R:.*]] [0, 0] replica 0 : {{.*}} -> tensor<8x8xf32>
// CHECK: %[[P1:.*]] = ein.extract_block %[[R]] [0, 0] replica 1
// CHECK: %[[H1:.*]], %[[T1:.*]] = ein.transfer %[[P1]] [0, 0] [4, 8] from 1 to 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[H0:.*]], %[[T0:.*]] = ein.transfer %[[P0]] [4, 0] [4, 8] from 0 to 1 : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[S0:.*]], %[[A0:.*]] = ein.aggregate add %{{.*}}, %[[H1]] on 0 after(%[[T1]]) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: ein.aggregate add %{{.*}}, %[[H0]] on 1 after(%[[T0]])
// CHECK: ein.from_blocks %[[S0]], %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> !ein.rel<8x8xbf16, parts = [2, 1], devices = [0, 1]>
module attributes {ein.target = #ein.target<devices = 2, topology = "h200-pair">} {
  func.func @reduce_scatter_gather(%r: !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add, devices = [0, 1]>) -> !ein.rel<8x8xbf16, parts = [2, 1], devices = [0, 1]> {
    %p0 = ein.extract_block %r [0, 0] replica 0 : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add, devices = [0, 1]> -> tensor<8x8xf32>
    %p1 = ein.extract_block %r [0, 0] replica 1 : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add, devices = [0, 1]> -> tensor<8x8xf32>
    %h1, %t1 = ein.transfer %p1 [0, 0] [4, 8] from 1 to 0 : tensor<8x8xf32> -> tensor<4x8xf32>
    %h0, %t0 = ein.transfer %p0 [4, 0] [4, 8] from 0 to 1 : tensor<8x8xf32> -> tensor<4x8xf32>
    %mine0 = ein.slice %p0 [0, 0] [4, 8] : tensor<8x8xf32> -> tensor<4x8xf32>
    %mine1 = ein.slice %p1 [4, 0] [4, 8] : tensor<8x8xf32> -> tensor<4x8xf32>
    %s0, %a0 = ein.aggregate add %mine0, %h1 on 0 after(%t1) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xbf16>
    %s1, %a1 = ein.aggregate add %mine1, %h0 on 1 after(%t0) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xbf16>
    %out = ein.from_blocks %s0, %s1 : tensor<4x8xbf16>, tensor<4x8xbf16> -> !ein.rel<8x8xbf16, parts = [2, 1], devices = [0, 1]>
    return %out : !ein.rel<8x8xbf16, parts = [2, 1], devices = [0, 1]>
  }
}

// -----

// Relays and multicasts on the V100 cube-mesh.
// CHECK-LABEL: func.func @relay_and_multicast
// CHECK: %[[B:.*]], %[[T:.*]] = ein.transfer %{{.*}} [0, 0] [16, 16] from 0 to 5 via [1] : tensor<16x16xf16> -> tensor<16x16xf16>
// CHECK: ein.multicast %[[B]] from 5 to [6, 7] after(%[[T]]) : tensor<16x16xf16> -> tensor<16x16xf16>, tensor<16x16xf16>
module attributes {ein.target = #ein.target<devices = 8, topology = "dgx1-v100", chip = "sm_70">} {
  func.func @relay_and_multicast(%x: tensor<16x16xf16>) -> (tensor<16x16xf16>, tensor<16x16xf16>) {
    %b, %t = ein.transfer %x [0, 0] [16, 16] from 0 to 5 via [1] : tensor<16x16xf16> -> tensor<16x16xf16>
    %c6, %c7, %done = ein.multicast %b from 5 to [6, 7] after(%t) : tensor<16x16xf16> -> tensor<16x16xf16>, tensor<16x16xf16>
    return %c6, %c7 : tensor<16x16xf16>, tensor<16x16xf16>
  }
}

// -----

// A gemm with its epilogue: GELU of the product plus a bias, and a product
// of a transposed weight plus a bias and a residual, batched over a shared
// matrix.
// CHECK-LABEL: func.func @gemm_epilogues
// CHECK: %[[H:.*]] = ein.gemm gelu_tanh %{{.*}}, %{{.*}} bias %{{.*}} on 0 : (tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<64xbf16>) -> tensor<16x64xbf16>
// CHECK: ein.gemm none %{{.*}}, %{{.*}} bias %{{.*}} addend %{{.*}} on 1 {transpose_b} : (tensor<2x8x64xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
// CHECK: ein.gemm relu %{{.*}}, %{{.*}} on 0 {transpose_a} : (tensor<32x16xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
func.func @gemm_epilogues(%x: tensor<16x32xbf16>, %w: tensor<32x64xbf16>, %b: tensor<64xbf16>,
                          %y: tensor<2x8x64xf32>, %v: tensor<32x64xf32>, %c: tensor<32xf32>, %r: tensor<2x8x32xf32>,
                          %p: tensor<32x16xf32>, %q: tensor<32x8xf32>) -> (tensor<16x64xbf16>, tensor<2x8x32xf32>, tensor<16x8xf32>) {
  %h = ein.gemm gelu_tanh %x, %w bias %b on 0 : (tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<64xbf16>) -> tensor<16x64xbf16>
  %o = ein.gemm none %y, %v bias %c addend %r on 1 {transpose_b} : (tensor<2x8x64xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %s = ein.gemm relu %p, %q on 0 {transpose_a} : (tensor<32x16xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  return %h, %o, %s : tensor<16x64xbf16>, tensor<2x8x32xf32>, tensor<16x8xf32>
}

// -----

// Views: q of a fused QKV projection split into heads, and an attention
// result stored transposed.
// CHECK-LABEL: func.func @views
// CHECK: ein.view %{{.*}} offset 128 strides [6144, 64, 384, 1] : tensor<2x16x384xbf16> -> tensor<2x2x16x64xbf16>
// CHECK: ein.view %{{.*}} offset 0 strides [2048, 64, 1024, 1] : tensor<2x2x16x64xbf16> -> tensor<2x16x2x64xbf16>
func.func @views(%qkv: tensor<2x16x384xbf16>, %o: tensor<2x2x16x64xbf16>) -> (tensor<2x2x16x64xbf16>, tensor<2x16x2x64xbf16>) {
  %k = ein.view %qkv offset 128 strides [6144, 64, 384, 1] : tensor<2x16x384xbf16> -> tensor<2x2x16x64xbf16>
  %t = ein.view %o offset 0 strides [2048, 64, 1024, 1] : tensor<2x2x16x64xbf16> -> tensor<2x16x2x64xbf16>
  return %k, %t : tensor<2x2x16x64xbf16>, tensor<2x16x2x64xbf16>
}
