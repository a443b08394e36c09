// RUN: ein-opt %s -split-input-file --ein-lower-to-cpu -verify-diagnostics

// An elementwise block may write integers (ein-lower-to-cpu.mlir); a sum of
// them may not.
func.func @integers(%x: tensor<4xi32>) -> tensor<i32> {
  // expected-error @+1 {{'ein.join_agg' op has element type 'i32'; block kernels read and write floats}}
  %y = ein.join_agg add ins(%x[d0] : tensor<4xi32>) out[] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<i32> {
  ^bb0(%a: i32):
    ein.yield %a : i32
  }
  return %y : tensor<i32>
}

// -----

// expected-error @+1 {{already has an @ein_kernels module; block kernels are built once}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  module @ein_kernels attributes {ein.kernel_target = "cpu"} {
  }
}

// -----

func.func @nested_index(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.join_agg' op reads ein.index inside a nested region, which block kernels do not lower}}
  %y = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0>} : tensor<4xf32> {
  ^bb0(%a: f32):
    %t = arith.constant true
    %r = scf.if %t -> (f32) {
      %i = ein.index 0 : index
      %f = arith.index_cast %i : index to i32
      %g = arith.sitofp %f : i32 to f32
      scf.yield %g : f32
    } else {
      scf.yield %a : f32
    }
    ein.yield %r : f32
  }
  return %y : tensor<4xf32>
}

// -----

func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'ein.softmax' op has a 'tensor<?xf32>' operand or result; a block kernel needs static tensors}}
  %y = ein.softmax %x dim 0 {device = 0 : i64} : tensor<?xf32>
  return %y : tensor<?xf32>
}
