// RUN: ein-opt %s -split-input-file -ein-insert-exchanges -verify-diagnostics

func.func @no_spec(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no spec; run ein-decompose first}}
  %s = ein.softmax %a dim 0 : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @not_ein(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{cannot be planned; ein-insert-exchanges takes logical ein ops on tensors}}
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}
