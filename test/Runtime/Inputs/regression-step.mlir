// A least-squares regression: loss = sum((x @ w + b - y)^2) / rows, with
// the weight and bias trained (ein-compile --optimizer appends the step).
func.func @regression(%x: tensor<12x6xf32>, %y: tensor<12x3xf32>,
                      %w: tensor<6x3xf32> {ein.weight},
                      %b: tensor<3xf32> {ein.weight}) -> tensor<f32> {
  %p = ein.join_agg add ins(%x[d0, d2], %w[d2, d1] : tensor<12x6xf32>, tensor<6x3xf32>) out[d0, d1] : tensor<12x3xf32> {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    ein.yield %m : f32
  }
  %l = ein.join_agg add ins(%p[d0, d1], %b[d1], %y[d0, d1] : tensor<12x3xf32>, tensor<3xf32>, tensor<12x3xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32, %c: f32, %t: f32):
    %s = arith.addf %a, %c : f32
    %e = arith.subf %s, %t : f32
    %q = arith.mulf %e, %e : f32
    %k = arith.constant 0.0833333358 : f32
    %r = arith.mulf %q, %k : f32
    ein.yield %r : f32
  }
  return %l : tensor<f32>
}
