// An argument read only through slices arrives in the parts its slices read,
// each where it is first needed, when those parts tile it as an even cut: a
// fused QKV weight (one [64, 192] argument sliced into q, k and v), weights
// split over 2 GPUs, is laid out in six column blocks, every slice's share
// on the GPU that multiplies by it, and no byte of it moves (it used to
// arrive whole on GPU 0, and GPU 1's halves moved every step). The lowered
// program computes the original's results.
// RUN: ein-opt %s --ein-attach-target="devices=2" --ein-decompose="weights-replicable=false" --ein-insert-exchanges --ein-synthesize-exchanges="exchange=synthesized weights-replicable=false report=%t.report.json" | FileCheck %s
// CHECK: ein.partition %arg1 : tensor<64x192xf32> -> !ein.rel<64x192xf32, parts = [1, 6], devices = [0, 1, 0, 1, 0, 1]>
// RUN: %python -c "import json, sys; f = json.load(open(sys.argv[1]))['functions'][0]; print('weight moves', sum(e['bytes'] for e in f['exchanges'] if e['value'] == 'arg1'))" %t.report.json | FileCheck %s --check-prefix=MOVES
// MOVES: weight moves 0
// RUN: ein-opt %s --ein-export-program=%t.logical.json -o /dev/null
// RUN: ein-opt %s --ein-attach-target="devices=2" --ein-decompose="weights-replicable=false" --ein-insert-exchanges --ein-synthesize-exchanges="exchange=synthesized weights-replicable=false" --ein-export-program=%t.device.json -o /dev/null
// RUN: ein-eval %t.logical.json --seed=3 | sed -e "s/'[^']*'//" > %t.want
// RUN: ein-eval %t.device.json --seed=3 | sed -e "s/'[^']*'//" > %t.got
// RUN: diff %t.want %t.got
func.func @qkv(%x: tensor<8x64xf32>, %w: tensor<64x192xf32> {ein.weight}) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %wq = ein.slice %w [0, 0] [64, 64] : tensor<64x192xf32> -> tensor<64x64xf32>
  %wk = ein.slice %w [0, 64] [64, 64] : tensor<64x192xf32> -> tensor<64x64xf32>
  %wv = ein.slice %w [0, 128] [64, 64] : tensor<64x192xf32> -> tensor<64x64xf32>
  %q = ein.join_agg add ins(%x[d0, d2], %wq[d2, d1] : tensor<8x64xf32>, tensor<64x64xf32>) out[d0, d1] : tensor<8x64xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %k = ein.join_agg add ins(%x[d0, d2], %wk[d2, d1] : tensor<8x64xf32>, tensor<64x64xf32>) out[d0, d1] : tensor<8x64xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  %v = ein.join_agg add ins(%x[d0, d2], %wv[d2, d1] : tensor<8x64xf32>, tensor<64x64xf32>) out[d0, d1] : tensor<8x64xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    ein.yield %m : f32
  }
  return %q, %k, %v : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
