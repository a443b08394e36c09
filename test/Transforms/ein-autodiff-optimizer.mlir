// RUN: ein-opt %s --ein-autodiff="optimizer=adamw" | FileCheck %s --check-prefix=ADAMW
// RUN: ein-opt %s --ein-autodiff="optimizer=sgd:momentum=0.9,max_grad_norm=1" | FileCheck %s --check-prefix=SGD

// With an optimizer the gradients feed one step of it: AdamW gains the
// learning rate, the step count and two moments per weight as arguments,
// and its results are the loss, the updated weight and moments, each
// marked with the argument it replaces.
// ADAMW-LABEL: func.func @adamw
// ADAMW-SAME: (%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8x2xf32> {ein.weight}, %[[LR:.*]]: tensor<f32>, %[[STEP:.*]]: tensor<f32>, %[[M:.*]]: tensor<8x2xf32>, %[[V:.*]]: tensor<8x2xf32>)
// ADAMW-SAME: -> (tensor<f32>, tensor<8x2xf32> {ein.updates = 1 : i64}, tensor<8x2xf32> {ein.updates = 4 : i64}, tensor<8x2xf32> {ein.updates = 5 : i64})
// ADAMW: %[[MN:.*]] = ein.join_agg none ins(%[[M]][d0, d1], %{{.*}}[d0, d1]
// ADAMW: %[[VN:.*]] = ein.join_agg none ins(%[[V]][d0, d1], %{{.*}}[d0, d1]
// ADAMW: %[[W:.*]] = ein.join_agg none ins(%{{.*}}[d0, d1], %[[MN]][d0, d1], %[[VN]][d0, d1], %[[LR]][], %[[STEP]][]
// ADAMW: math.powf
// ADAMW: math.sqrt
// ADAMW: return %{{.*}}, %[[W]], %[[MN]], %[[VN]]
func.func @adamw(%x: tensor<4x8xf32>, %w: tensor<8x2xf32> {ein.weight}) -> tensor<f32> {
  %y = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<4x8xf32>, tensor<8x2xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %q = arith.mulf %m, %m : f32
    ein.yield %q : f32
  }
  return %y : tensor<f32>
}

// SGD with momentum and clipping: the learning rate and one buffer per
// weight as arguments; the squared norm summed, the clipping coefficient
// a scalar join-agg, the buffer then the weight updated.
// SGD-LABEL: func.func @adamw
// SGD-SAME: (%{{.*}}: tensor<4x8xf32>, %[[W:.*]]: tensor<8x2xf32> {ein.weight}, %[[LR:.*]]: tensor<f32>, %[[B:.*]]: tensor<8x2xf32>)
// SGD-SAME: -> (tensor<f32>, tensor<8x2xf32> {ein.updates = 1 : i64}, tensor<8x2xf32> {ein.updates = 3 : i64})
// SGD: %[[SQ:.*]] = ein.join_agg add ins(%[[G:.*]][d0, d1] : tensor<8x2xf32>) out[] : tensor<f32>
// SGD: %[[C:.*]] = ein.join_agg none ins(%[[SQ]][] : tensor<f32>) out[] : tensor<f32>
// SGD: arith.minimumf
// SGD: %[[GC:.*]] = ein.join_agg none ins(%[[G]][d0, d1], %[[C]][] : tensor<8x2xf32>, tensor<f32>)
// SGD: %[[BN:.*]] = ein.join_agg none ins(%[[B]][d0, d1], %[[GC]][d0, d1], %[[W]][d0, d1]
// SGD: %[[WN:.*]] = ein.join_agg none ins(%[[W]][d0, d1], %[[GC]][d0, d1], %[[LR]][], %[[BN]][d0, d1]
// SGD: return %{{.*}}, %[[WN]], %[[BN]]
