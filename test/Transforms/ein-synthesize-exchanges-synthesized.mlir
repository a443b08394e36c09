// exchange=synthesized on the V100 cube-mesh, blocks where the canonical
// placement puts them (place-blocks=false): 4 MiB blocks between GPUs with
// no NVLink relay through a GPU linked to both, and the lowered program
// still computes the original's result.
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges="exchange=synthesized place-blocks=false" -verify-each | FileCheck %s
// RUN: ein-opt %s --ein-export-program=%t.logical.json -o /dev/null
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges="exchange=synthesized place-blocks=false" --ein-export-program=%t.device.json -o /dev/null
// RUN: ein-eval %t.logical.json --seed=3 | sed -e "s/'[^']*'//" > %t.want
// RUN: ein-eval %t.device.json --seed=3 | sed -e "s/'[^']*'//" > %t.got
// RUN: diff %t.want %t.got
// Placed for the machine (the default), the transposed blocks go to GPUs
// an NVLink joins to their sources: nothing needs a relay (so the plain
// form wins), the report counts the moved op, and the result is the same.
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges="exchange=synthesized report=%t.placed.json" -verify-each | FileCheck %s --check-prefix=PLACED
// RUN: FileCheck %s --check-prefix=PLACEDREPORT --input-file=%t.placed.json
// PLACEDREPORT: "form": "naive",
// PLACEDREPORT: "placed_ops": 1,
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges=exchange=synthesized --ein-export-program=%t.placed-device.json -o /dev/null
// RUN: ein-eval %t.placed-device.json --seed=3 | sed -e "s/'[^']*'//" > %t.placed-got
// RUN: diff %t.want %t.placed-got
// The naive form of the same plan sends those blocks directly.
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges | FileCheck %s --check-prefix=NAIVE
// RUN: not ein-opt %s -ein-plan -ein-synthesize-exchanges=exchange=fancy 2>&1 | FileCheck %s --check-prefix=FORM
// FORM: error: exchange=fancy is not available; the exchange forms are: naive, synthesized
// Synthesis needs the topology, here a file that is not there.
// RUN: sed -e 's|"dgx1-v100"|"/nonexistent/t.json"|' %s | not ein-opt -ein-plan -ein-synthesize-exchanges=exchange=synthesized 2>&1 | FileCheck %s --check-prefix=NOTOPO
// NOTOPO: error: topology file '/nonexistent/t.json' was not resolved: ein-attach-target reads it into the target
// The report says which form was lowered: here the synthesized one.
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges="exchange=synthesized place-blocks=false report=%t.report.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t.report.json
// A relayed transfer lists its relay and the links of both hops.
// REPORT: "from": 6,
// REPORT-NEXT: "kind": "repartition",
// REPORT-NEXT: "links": [
// REPORT-NEXT: "gpu6->gpu5",
// REPORT-NEXT: "gpu5->gpu1"
// REPORT: "start_ms": {{[0-9.e-]+}},
// REPORT-NEXT: "to": 1,
// REPORT-NEXT: "value": "v0",
// REPORT-NEXT: "via": [
// REPORT-NEXT: 5
// REPORT: "form": "synthesized"

// CHECK-LABEL: func.func @transpose_add
// CHECK: ein.transfer {{.*}} [1024, 1024] from 4 to 1 via [0] : tensor<2048x1024xf32> -> tensor<1024x1024xf32>
// PLACED-LABEL: func.func @transpose_add
// PLACED-NOT: via
// NAIVE-LABEL: func.func @transpose_add
// NAIVE-NOT: via
module attributes {ein.target = #ein.target<devices = 8, topology = "dgx1-v100">} {
  func.func @transpose_add(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
    %t = ein.join_agg none ins(%x[d0, d1] : tensor<4096x4096xf32>) out[d1, d0] : tensor<4096x4096xf32> {
    ^bb0(%v: f32):
      ein.yield %v : f32
    }
    %s = ein.join_agg none ins(%t[d0, d1], %x[d0, d1] : tensor<4096x4096xf32>, tensor<4096x4096xf32>) out[d0, d1] : tensor<4096x4096xf32> {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      ein.yield %r : f32
    }
    return %s : tensor<4096x4096xf32>
  }
}
