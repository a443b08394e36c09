// A machine described in a JSON file is read once, by ein-attach-target: the
// target then carries the file's JSON text, and the planner prices the plan
// on it with no file in reach.
// RUN: ein-opt %s --ein-attach-target="devices=2 topology=%S/Inputs/two-gpus.json" | FileCheck %s --check-prefix=ATTACHED
// RUN: ein-opt %s --ein-attach-target="devices=2 topology=%S/Inputs/two-gpus.json" -o %t.mlir
// RUN: mkdir -p %t.elsewhere && cd %t.elsewhere && ein-opt %t.mlir -ein-decompose=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=PAIR
// The topology bench/probe_topology.py measured on the 2 x H200 machine
// (examples/topologies/h200x2-measured.json) loads and prices the plan.
// RUN: ein-opt %s --ein-attach-target="devices=2 topology=%ein_src_root/examples/topologies/h200x2-measured.json" -ein-decompose=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=H200
// A file that is not there is an error where it is read.
// RUN: not ein-opt %s --ein-attach-target="devices=2 topology=%S/Inputs/absent.json" 2>&1 | FileCheck %s --check-prefix=ABSENT
// A path left in a target (not resolved by ein-attach-target) is refused.
// RUN: sed -e 's|^module {|module attributes {ein.target = #ein.target<devices = 2, topology = "two-gpus.json">} {|' %s | not ein-opt 2>&1 | FileCheck %s --check-prefix=PATH

// ATTACHED: #ein.target<devices = 2, topology = "{\22devices\22:2,
// ATTACHED-SAME: \22name\22:\22measured-pair\22

// Two GPUs, 100 GB/s each way, 10 us a transfer. The (2, 1, 1) cut sends
// B's one extra copy, 64 x 64 x 4 B = 16 KiB.
// PAIR-DAG: remark: simulated step 0.011 ms on measured-pair with naive exchanges: 3 tasks, 16.0 KiB moved; busiest link gpu0->gpu1
// PAIR-DAG: remark: spec #ein.spec<[2, 1, 1]>: join 16.0 KiB

// H200-DAG: remark: simulated step {{.*}} on h200x2-measured with naive exchanges: 3 tasks, 16.0 KiB moved
// H200-DAG: remark: spec #ein.spec<[2, 1, 1]>

// ABSENT: error: cannot open topology file '{{.*}}absent.json'
// PATH: error: topology file 'two-gpus.json' was not resolved: ein-attach-target reads it into the target

module {
  func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x64xf32>, tensor<64x64xf32>) out[d0, d2] : tensor<64x64xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x64xf32>
  }
}
