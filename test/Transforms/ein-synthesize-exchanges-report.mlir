// The exchange report: every transfer with its op, kind, value, region,
// endpoints, bytes, links, its place on its receiving GPU's copy stream
// (copy_order: the only transfer GPU 1 receives is its first) and when it
// starts and lands in the simulated step, the byte totals per proxy term,
// and the simulated step on the target's topology. The same input gives
// the same bytes.
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges="report=%t.json" -o /dev/null
// RUN: ein-opt %s -ein-plan -ein-synthesize-exchanges="report=%t.again.json" -o /dev/null
// RUN: diff %t.json %t.again.json
// RUN: FileCheck %s --input-file=%t.json
// RUN: sed -e 's|"nvswitch"|"/nonexistent/absent.json"|' %s | not ein-opt -ein-plan -ein-synthesize-exchanges="report=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: topology file '/nonexistent/absent.json' was not resolved: ein-attach-target reads it into the target

// B (an activation) arrives on GPU 0 and goes to the three other join
// blocks: three join transfers of 32 x 16 x 4 B over gpu0.out and the
// receiver's ingress link.
// CHECK: "devices": 4,
// CHECK: "exchange": "naive",
// CHECK: "bytes": {
// CHECK-NEXT: "aggregate": 0,
// CHECK-NEXT: "join": 6144,
// CHECK-NEXT: "repartition": 0
// CHECK: "exchanges": [
// CHECK: "bytes": 2048,
// CHECK-NEXT: "copy_order": 0,
// CHECK-NEXT: "end_ms": {{[0-9.e-]+}},
// CHECK-NEXT: "from": 0,
// CHECK-NEXT: "kind": "join",
// CHECK-NEXT: "links": [
// CHECK-NEXT: "gpu0.out",
// CHECK-NEXT: "gpu1.in"
// CHECK: "loc": "loc(\"{{.*}}ein-synthesize-exchanges-report.mlir\":{{[0-9]+}}:{{[0-9]+}})",
// CHECK: "op": "ein.join_agg #0",
// CHECK-NEXT: "sizes": [
// CHECK-NEXT: 32,
// CHECK-NEXT: 16
// CHECK: "to": 1,
// CHECK-NEXT: "value": "arg1"
// CHECK: "to": 2,
// CHECK: "to": 3,
// CHECK: "function": "matmul",
// CHECK-NEXT: "placed_ops": 0,
// CHECK-NEXT: "simulated_ms": {{[0-9.e-]+}}
// CHECK: "topology": "nvswitch"
module attributes {ein.target = #ein.target<devices = 4, topology = "nvswitch">} {
  func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xf32>, tensor<32x16xf32>) out[d0, d2] : tensor<64x16xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : tensor<64x16xf32>
  }
}
