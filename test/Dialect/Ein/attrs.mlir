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

// A topology read from a file by ein-attach-target: its JSON text.
// CHECK: #ein.target<devices = 2, topology = "{\22devices\22:2,\22links\22:[{\22bandwidth_gb_per_s\22:100,\22name\22:\22a\22}],\22name\22:\22lab\22,\22routes\22:[{\22from\22:0,\22latency_us\22:1,\22links\22:[\22a\22],\22to\22:1},{\22from\22:1,\22latency_us\22:1,\22links\22:[\22a\22],\22to\22:0}]}", chip = "host">
module attributes {ein.target = #ein.target<devices = 2, topology = "{\22devices\22:2,\22links\22:[{\22bandwidth_gb_per_s\22:100,\22name\22:\22a\22}],\22name\22:\22lab\22,\22routes\22:[{\22from\22:0,\22latency_us\22:1,\22links\22:[\22a\22],\22to\22:1},{\22from\22:1,\22latency_us\22:1,\22links\22:[\22a\22],\22to\22:0}]}", chip = "host">} {
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

// -----

// The backend a target names (empty, the default, is not printed).
// CHECK: #ein.target<devices = 2, backend = "cpu">
module attributes {ein.target = #ein.target<devices = 2, backend = "cpu">} {
}

// -----

// CHECK: #ein.target<devices = 4, chip = "sm_80", backend = "cuda">
module attributes {ein.target = #ein.target<devices = 4, chip = "sm_80", backend = "cuda">} {
}
