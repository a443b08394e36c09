// LayerNorm whose result is transposed, as torchvision's ViT feeds
// nn.MultiheadAttention(batch_first=True) (which transposes its query to
// sequence-first): after ein-import the last join reads x and the
// statistics permuted and writes in its own loops' order. ein-fuse-
// composites renames its loops after x's dimensions and fuses it into one
// ein.layer_norm and a transpose (2 kernels for 6), and the bundle computes
// what the program does. (The near miss: ein-fuse-composites.mlir.)
// RUN: ein-opt %s --ein-fuse-composites | FileCheck %s
// CHECK-LABEL: func.func @layer_norm_transposed
// CHECK-SAME: (%[[X:.*]]: tensor<2x6x64xbf16>, %[[W:.*]]: tensor<64xbf16>, %[[B:.*]]: tensor<64xbf16>)
// CHECK-NEXT: %[[Y:.*]] = ein.layer_norm %[[X]] weight %[[W]] bias %[[B]] eps {{.*}} : tensor<2x6x64xbf16>, tensor<64xbf16>, tensor<64xbf16>
// CHECK-NEXT: %[[T:.*]] = ein.join_agg none ins(%[[Y]][d0, d1, d2] : tensor<2x6x64xbf16>) out[d1, d0, d2] : tensor<6x2x64xbf16>
// CHECK: return %[[T]]
// RUN: rm -rf %t && ein-compile %s -o %t --devices=2 | FileCheck %s --check-prefix=STEPS
// STEPS: steps: 4 kernel,
// RUN: ein-run %t --check --debug --seed=5 | FileCheck %s --check-prefix=CHECKED
// CHECKED: max_rel_err={{[0-9.e-]+}}
func.func @layer_norm_transposed(%x: tensor<2x6x64xbf16>, %g: tensor<64xbf16>, %h: tensor<64xbf16>) -> tensor<6x2x64xbf16> {
  %s = ein.join_agg add ins(%x[d0, d1, d2] : tensor<2x6x64xbf16>) out[d0, d1] : tensor<2x6xf32> {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    ein.yield %w : f32
  }
  %m = ein.join_agg none ins(%s[d0, d1] : tensor<2x6xf32>) out[d0, d1] : tensor<2x6xf32> {
  ^bb0(%a: f32):
    %n = arith.constant 6.400000e+01 : f32
    %r = arith.divf %a, %n : f32
    ein.yield %r : f32
  }
  %v = ein.join_agg add ins(%x[d0, d1, d2], %m[d0, d1] : tensor<2x6x64xbf16>, tensor<2x6xf32>) out[d0, d1] : tensor<2x6xf32> {
  ^bb0(%a: bf16, %b: f32):
    %w = arith.extf %a : bf16 to f32
    %d = arith.subf %w, %b : f32
    %q = arith.mulf %d, %d : f32
    ein.yield %q : f32
  }
  %y = ein.join_agg none ins(%x[d1, d0, d2], %m[d1, d0], %v[d1, d0], %g[d2], %h[d2] : tensor<2x6x64xbf16>, tensor<2x6xf32>, tensor<2x6xf32>, tensor<64xbf16>, tensor<64xbf16>) out[d0, d1, d2] : tensor<6x2x64xbf16> {
  ^bb0(%a: bf16, %b: f32, %c: f32, %gw: bf16, %hb: bf16):
    %n = arith.constant 6.400000e+01 : f32
    %var = arith.divf %c, %n : f32
    %eps = arith.constant 9.99999997E-7 : f32
    %t = arith.addf %var, %eps : f32
    %r = math.rsqrt %t : f32
    %w = arith.extf %a : bf16 to f32
    %ge = arith.extf %gw : bf16 to f32
    %he = arith.extf %hb : bf16 to f32
    %d = arith.subf %w, %b : f32
    %o = arith.mulf %d, %r : f32
    %o2 = arith.mulf %o, %ge : f32
    %o3 = arith.addf %o2, %he : f32
    %rb = arith.truncf %o3 : f32 to bf16
    %re = arith.extf %rb : bf16 to f32
    ein.yield %re : f32
  }
  return %y : tensor<6x2x64xbf16>
}
