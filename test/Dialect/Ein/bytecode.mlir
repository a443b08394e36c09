// The dialect's types, attributes and ops survive MLIR bytecode.
// RUN: ein-opt %s -emit-bytecode | ein-opt | FileCheck %s

// CHECK: module attributes {ein.target = #ein.target<devices = 2, topology = "h200-pair">}
// CHECK-LABEL: func.func @planned
// CHECK-SAME: !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add, devices = [0, 1]>
// CHECK: ein.join_agg add ins(%{{.*}}[d0, d1], %{{.*}}[d1, d2] : !ein.rel<8x8xf32, parts = [1, 2]>, !ein.rel<8x8xf32, parts = [2, 1]>) out[d0, d2] attributes {spec = #ein.spec<[1, 2, 1]>}
// CHECK: ein.repartition
module attributes {ein.target = #ein.target<devices = 2, topology = "h200-pair">} {
  func.func @planned(%a: !ein.rel<8x8xf32, parts = [1, 2]>, %b: !ein.rel<8x8xf32, parts = [2, 1]> {ein.weight}) -> !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add, devices = [0, 1]> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<8x8xf32, parts = [1, 2]>, !ein.rel<8x8xf32, parts = [2, 1]>) out[d0, d2] attributes {spec = #ein.spec<[1, 2, 1]>} : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    %p = ein.repartition %c : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> -> !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add, devices = [0, 1]>
    return %p : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add, devices = [0, 1]>
  }
}
