// RUN: ein-opt %s -verify-roundtrip | FileCheck %s

// Default fields are elided: replicas = 1, no partials, unplaced.
// CHECK-LABEL: func.func private @plain
// CHECK-SAME: !ein.rel<64x128xf32, parts = [2, 1]>
func.func private @plain(!ein.rel<64x128xf32, parts = [2, 1], replicas = 1>)

// Fields may come in any order; they print in a canonical one.
// CHECK-LABEL: func.func private @reordered
// CHECK-SAME: !ein.rel<10x7xbf16, parts = [4, 2], replicas = 2, partial = max, devices = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]>
func.func private @reordered(!ein.rel<10x7xbf16, devices = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7], partial = max, replicas = 2, parts = [4, 2]>)

// A scalar relation, an integer one and an online-softmax partial.
// CHECK-LABEL: func.func private @others
// CHECK-SAME: !ein.rel<f32, parts = []>
// CHECK-SAME: !ein.rel<8xi32, parts = [8]>
// CHECK-SAME: !ein.rel<1x4x16x8xf32, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax>
// CHECK-SAME: !ein.token
func.func private @others(!ein.rel<f32, parts = []>, !ein.rel<8xi32, parts = [8]>, !ein.rel<1x4x16x8xf32, parts = [1, 1, 1, 1], replicas = 2, partial = online_softmax>, !ein.token)
