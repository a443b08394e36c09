// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @device_on_relations(%a: !ein.rel<4xf32, parts = [1]>) -> !ein.rel<4xf32, parts = [1]> {
  // expected-error @+1 {{'device' marks block kernels on tensors, not planned ops on relations}}
  %r = ein.join_agg none ins(%a[d0] : !ein.rel<4xf32, parts = [1]>) out[d0] attributes {spec = #ein.spec<[1]>, device = 0 : i64} : !ein.rel<4xf32, parts = [1]> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : !ein.rel<4xf32, parts = [1]>
}

// -----

func.func @relations_without_spec(%a: !ein.rel<4xf32, parts = [1]>) -> !ein.rel<4xf32, parts = [1]> {
  // expected-error @+1 {{operates on relations but has no spec; a planned op needs one}}
  %r = ein.join_agg none ins(%a[d0] : !ein.rel<4xf32, parts = [1]>) out[d0] : !ein.rel<4xf32, parts = [1]> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : !ein.rel<4xf32, parts = [1]>
}

// -----

func.func @partial_input(%a: !ein.rel<4xf32, parts = [1], replicas = 2, partial = add>) -> !ein.rel<4xf32, parts = [1]> {
  // expected-error @+1 {{input 0 still holds pending partial<add> results; aggregate them first}}
  %r = ein.join_agg none ins(%a[d0] : !ein.rel<4xf32, parts = [1], replicas = 2, partial = add>) out[d0] attributes {spec = #ein.spec<[1]>} : !ein.rel<4xf32, parts = [1]> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : !ein.rel<4xf32, parts = [1]>
}

// -----

module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @input_cut_wrong(%a: !ein.rel<64x32xf32, parts = [2, 4], replicas = 2>, %b: !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) -> !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> {
    // expected-error @+1 {{spec cuts loop d1 into 2 parts but input 0 is cut into 4 along dimension 1}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<64x32xf32, parts = [2, 4], replicas = 2>, !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @input_replicas(%a: !ein.rel<64x32xf32, parts = [2, 2]>, %b: !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) -> !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> {
    // expected-error @+1 {{input 0 must arrive with 2 replicas under spec #ein.spec<[2, 2, 2]> (one per join block that reads it) but has 1}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<64x32xf32, parts = [2, 2]>, !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2, partial = add>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @result_cut_wrong(%a: !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, %b: !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) -> !ein.rel<64x16xf32, parts = [1, 2], replicas = 2, partial = add> {
    // expected-error @+1 {{spec cuts loop d0 into 2 parts but the result is cut into 1 along dimension 0}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [1, 2], replicas = 2, partial = add> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<64x16xf32, parts = [1, 2], replicas = 2, partial = add>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 8>} {
  func.func @result_not_partial(%a: !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, %b: !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) -> !ein.rel<64x16xf32, parts = [2, 2], replicas = 2> {
    // expected-error @+1 {{under spec #ein.spec<[2, 2, 2]> the result holds an aggregation fan-in of 2: it must be partial = add with replicas = 2, got '!ein.rel<64x16xf32, parts = [2, 2], replicas = 2>'}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<64x32xf32, parts = [2, 2], replicas = 2>, !ein.rel<32x16xf32, parts = [2, 2], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 2, 2]>} : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<64x16xf32, parts = [2, 2], replicas = 2>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @result_spuriously_partial(%a: !ein.rel<8x8xf32, parts = [2, 1]>, %b: !ein.rel<8x8xf32, parts = [1, 1], replicas = 2>) -> !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add> {
    // expected-error @+1 {{the result holds an aggregation fan-in of 1: it must be complete with replicas = 1}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<8x8xf32, parts = [2, 1]>, !ein.rel<8x8xf32, parts = [1, 1], replicas = 2>) out[d0, d2] attributes {spec = #ein.spec<[2, 1, 1]>} : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add>
  }
}

// -----

module attributes {ein.target = #ein.target<devices = 2>} {
  func.func @partials_not_in_acc_type(%a: !ein.rel<8x8xbf16, parts = [1, 2]>, %b: !ein.rel<8x8xbf16, parts = [2, 1]>) -> !ein.rel<8x8xbf16, parts = [1, 1], replicas = 2, partial = add> {
    // expected-error @+1 {{pending partials are kept in the accumulator type 'f32' but the result holds 'bf16'}}
    %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : !ein.rel<8x8xbf16, parts = [1, 2]>, !ein.rel<8x8xbf16, parts = [2, 1]>) out[d0, d2] attributes {spec = #ein.spec<[1, 2, 1]>} : !ein.rel<8x8xbf16, parts = [1, 1], replicas = 2, partial = add> {
    ^bb0(%x: bf16, %y: bf16):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.mulf %xf, %yf : f32
      ein.yield %m : f32
    }
    return %c : !ein.rel<8x8xbf16, parts = [1, 1], replicas = 2, partial = add>
  }
}
