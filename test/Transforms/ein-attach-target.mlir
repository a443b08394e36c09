// RUN: ein-opt %s -ein-attach-target="devices=8 topology=nvswitch chip=sm_90" | FileCheck %s
// RUN: ein-opt %s -ein-attach-target="devices=2 topology=h200-pair" | FileCheck %s --check-prefix=PAIR
// RUN: ein-opt %s -ein-attach-target="devices=16 topology=nodes=2,gpus=8 chip=host" | FileCheck %s --check-prefix=NODES
// RUN: ein-opt %s -ein-attach-target | FileCheck %s --check-prefix=DEFAULT
// RUN: ein-opt %s -ein-attach-target="devices=2 partials=out" | FileCheck %s --check-prefix=PARTIALS

// CHECK: module attributes {ein.target = #ein.target<devices = 8>}
// PAIR: module attributes {ein.target = #ein.target<devices = 2, topology = "h200-pair">}
// NODES: module attributes {ein.target = #ein.target<devices = 16, topology = "nodes=2,gpus=8", chip = "host">}
// DEFAULT: module attributes {ein.target = #ein.target<devices = 1>}
// PARTIALS: module attributes {ein.target = #ein.target<devices = 2, partials = "out">}
// CHECK-LABEL: func.func @f
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

