func.func @masked(%q: tensor<1x4x256x64xbf16>, %k: tensor<1x4x256x64xbf16>, %v: tensor<1x4x256x64xbf16>) -> tensor<1x4x256x64xbf16> {
  %s = ein.join_agg add ins(%q[d0, d1, d2, d4], %k[d0, d1, d3, d4] : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>) out[d0, d1, d2, d3] : tensor<1x4x256x256xf32> {
  ^bb0(%a: bf16, %b: bf16):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    ein.yield %m : f32
  }
  %masked = ein.join_agg none ins(%s[d0, d1, d2, d3] : tensor<1x4x256x256xf32>) out[d0, d1, d2, d3] : tensor<1x4x256x256xf32> {
  ^bb0(%x: f32):
    %i = ein.index 2 : index
    %j = ein.index 3 : index
    %c = arith.cmpi ugt, %j, %i : index
    %scale = arith.constant 0.125 : f32
    %sx = arith.mulf %x, %scale : f32
    %big = arith.constant -1.0e9 : f32
    %r = arith.select %c, %big, %sx : f32
    ein.yield %r : f32
  }
  %mx = ein.join_agg max ins(%masked[d0, d1, d2, d3] : tensor<1x4x256x256xf32>) out[d0, d1, d2] : tensor<1x4x256xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %p = ein.join_agg none ins(%masked[d0, d1, d2, d3], %mx[d0, d1, d2] : tensor<1x4x256x256xf32>, tensor<1x4x256xf32>) out[d0, d1, d2, d3] : tensor<1x4x256x256xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    ein.yield %e : f32
  }
  %sum = ein.join_agg add ins(%p[d0, d1, d2, d3] : tensor<1x4x256x256xf32>) out[d0, d1, d2] : tensor<1x4x256xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  %y = ein.join_agg none ins(%p[d0, d1, d2, d3], %sum[d0, d1, d2] : tensor<1x4x256x256xf32>, tensor<1x4x256xf32>) out[d0, d1, d2, d3] : tensor<1x4x256x256xf32> {
  ^bb0(%a: f32, %b: f32):
    %q2 = arith.divf %a, %b : f32
    ein.yield %q2 : f32
  }
  %o = ein.join_agg add ins(%y[d0, d1, d2, d4], %v[d0, d1, d4, d3] : tensor<1x4x256x256xf32>, tensor<1x4x256x64xbf16>) out[d0, d1, d2, d3] : tensor<1x4x256x64xbf16> {
  ^bb0(%a: f32, %b: bf16):
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %bf : f32
    ein.yield %m : f32
  }
  return %o : tensor<1x4x256x64xbf16>
}
