// RUN: ein-opt %s -split-input-file --ein-autodiff -verify-diagnostics

// expected-error @+1 {{ein-autodiff needs the first result to be the loss, one float (a tensor of one element); got 'tensor<4xf32>'}}
func.func @not_scalar(%w: tensor<4xf32> {ein.weight}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{ein-autodiff: no argument is marked {ein.weight} or {ein.grad}, so there is no gradient to compute}}
func.func @nothing_marked(%x: tensor<1xf32>) -> tensor<1xf32> {
  return %x : tensor<1xf32>
}

// -----

// expected-error @+1 {{ein-autodiff: argument 0 is marked for a gradient but holds 'i64', not floats}}
func.func @integer(%i: tensor<2xi64> {ein.grad}, %x: tensor<1xf32>) -> tensor<1xf32> {
  return %x : tensor<1xf32>
}

// -----

func.func @no_rule(%w: tensor<2x4xf32> {ein.weight}) -> tensor<f32> {
  // expected-error @+1 {{ein-autodiff has no adjoint rule for 'ein.softmax' (its operands depend on a marked argument)}}
  %s = ein.softmax %w dim 1 : tensor<2x4xf32>
  %l = ein.join_agg add ins(%s[d0, d1] : tensor<2x4xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %l : tensor<f32>
}

// -----

func.func @no_derivative(%w: tensor<4xf32> {ein.weight}) -> tensor<f32> {
  %l = ein.join_agg add ins(%w[d0] : tensor<4xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{ein-autodiff has no derivative rule for 'math.sin' in a join region}}
    %s = math.sin %a : f32
    ein.yield %s : f32
  }
  return %l : tensor<f32>
}

// -----

func.func @product(%w: tensor<4xf32> {ein.weight}) -> tensor<f32> {
  // expected-error @+1 {{ein-autodiff has no adjoint rule for a 'mul' aggregation}}
  %l = ein.join_agg mul ins(%w[d0] : tensor<4xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %l : tensor<f32>
}

// -----

func.func @composite(%w: tensor<2x4xf32> {ein.weight}, %b: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{ein-autodiff has no adjoint rule for 'ein.layer_norm'}}
  %n = ein.layer_norm %w eps 1.0e-05 : tensor<2x4xf32>
  %l = ein.join_agg add ins(%n[d0, d1] : tensor<2x4xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %l : tensor<f32>
}
