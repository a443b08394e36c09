// Each bad optimizer option is refused with its reason.
// RUN: not ein-opt %s --ein-autodiff="optimizer=adam" 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: ein-autodiff: unknown optimizer 'adam' (sgd or adamw)
// RUN: not ein-opt %s --ein-autodiff="optimizer=sgd:lr=0.1" 2>&1 | FileCheck %s --check-prefix=KEY
// KEY: error: ein-autodiff: optimizer item 'lr=0.1' is not KEY=NUMBER with KEY one of weight_decay, max_grad_norm, momentum, nesterov
// RUN: not ein-opt %s --ein-autodiff="optimizer=adamw:beta2=1.5" 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: ein-autodiff: optimizer item 'beta2=1.5' is out of range
// RUN: not ein-opt %s --ein-autodiff="optimizer=sgd:nesterov=1" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// NESTEROV: error: ein-autodiff: sgd with nesterov=1 needs momentum > 0 (as torch.optim.SGD)

func.func @f(%w: tensor<2xf32> {ein.weight}) -> tensor<f32> {
  %l = ein.join_agg add ins(%w[d0] : tensor<2xf32>) out[] : tensor<f32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %l : tensor<f32>
}
