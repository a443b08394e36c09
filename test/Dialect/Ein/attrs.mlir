// RUN: ein-opt %s -split-input-file -verify-roundtrip | FileCheck %s

// Defaults (topology nvswitch, chip sm_90) are elided when printed.
// CHECK: module attributes {ein.target = #ein.target<devices = 8>}
module attributes {ein.target = #ein.target<devices = 8, topology = "nvswitch", chip = "sm_90">} {
}

// -----

// CHECK: #ein.target<devices = 16, topology = "nodes=2,gpus=8">
module attributes {ein.target = #ein.target<devices = 16, topology = "nodes=2,gpus=8">} {
}

// -----

// CHECK: #ein.target<devices = 4, topology = "machines/lab.json", chip = "host">
module attributes {ein.target = #ein.target<devices = 4, topology = "machines/lab.json", chip = "host">} {
}

// -----

// CHECK-LABEL: func.func @weights
// CHECK-SAME: (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4x4xf32> {ein.weight})
func.func @weights(%x: tensor<4xf32>, %w: tensor<4x4xf32> {ein.weight}) {
  return
}

// -----

// CHECK: func.func private @spec() attributes {s = #ein.spec<[2, 1, 4]>}
func.func private @spec() attributes {s = #ein.spec<[2, 1, 4]>}
