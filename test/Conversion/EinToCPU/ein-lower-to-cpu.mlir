// RUN: ein-opt %s -split-input-file --ein-lower-to-cpu=lower-to-llvm=false | FileCheck %s
// RUN: ein-opt %s -split-input-file --ein-lower-to-cpu | FileCheck %s --check-prefix=LLVM

// A bf16 block of a row sum (16 long: more than the 8 points unrolled
// below) that starts at row 4 and masks by whole-tensor row: f32 scratch
// filled with 0, a reduction whose ein.index reads linalg.index + 4, one
// rounding into the bf16 result, the scratch freed.

// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @masked_sum
// CHECK: ein.join_agg add {{.*}} attributes {device = 1 : i64, ein.kernel = "ein_kernel_0", ein.loop_offsets = array<i64: 4, 0>}
// The signature table: the block's operand read, its result written.
// CHECK: module @ein_kernels attributes {ein.kernel_signatures = "{\22format\22:\22ein-kernel-signatures\22,\22kernels\22:{\22ein_kernel_0\22:{\22args\22:[{\22access\22:\22read\22,\22dtype\22:\22bf16\22,\22shape\22:[4,16]},{\22access\22:\22write\22,\22dtype\22:\22bf16\22,\22shape\22:[4]}],\22scalars\22:0}}}", ein.kernel_target = "cpu"}
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<4x16xbf16>, %[[OUT:.*]]: memref<4xbf16>)
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%[[ACC]] : memref<4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[FULL]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<4x16xbf16>) outs(%[[ACC]] : memref<4xf32>)
// CHECK: ^bb0(%[[IN:.*]]: bf16, %[[RUNNING:.*]]: f32):
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[ROWI:.*]] = arith.addi %[[I]], %[[C4]] : index
// CHECK: arith.cmpi ult, %[[ROWI]]
// CHECK: %[[V:.*]] = arith.select
// CHECK: %[[SUM:.*]] = arith.addf %[[RUNNING]], %[[V]] : f32
// CHECK: linalg.yield %[[SUM]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : memref<4xf32>) outs(%[[OUT]] : memref<4xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.dealloc %[[ACC]] : memref<4xf32>
// CHECK-NEXT: return

// The same module lowered: the body is internal, and the kernel of the
// runtime's ABI loads each buffer pointer from the argument array.
// LLVM-LABEL: func.func @masked_sum
// LLVM: module @ein_kernels
// LLVM: llvm.mlir.global external constant @ein_kernel_signatures("{\22format\22:\22ein-kernel-signatures\22,\22kernels\22:{\22ein_kernel_0\22:{\22args\22:[{\22access\22:\22read\22,\22dtype\22:\22bf16\22,\22shape\22:[4,16]},{\22access\22:\22write\22,\22dtype\22:\22bf16\22,\22shape\22:[4]}],\22scalars\22:0}}}\00") {addr_space = 0 : i32}
// LLVM: llvm.func internal @ein_kernel_0.body(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// LLVM-NOT: bf16 {{.*}} -> f32
// LLVM: llvm.func @ein_kernel_0(%[[ARGS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr)
// LLVM-NEXT: %[[P0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM-NEXT: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// LLVM-NEXT: %[[P1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM-NEXT: %[[A1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// LLVM-NEXT: llvm.call @ein_kernel_0.body(%[[A0]], %[[A1]]) : (!llvm.ptr, !llvm.ptr) -> ()
// LLVM-NEXT: llvm.return
func.func @masked_sum(%x: tensor<4x16xbf16>) -> tensor<4xbf16> {
  %s = ein.join_agg add ins(%x[d0, d1] : tensor<4x16xbf16>) out[d0] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 4, 0>} : tensor<4xbf16> {
  ^bb0(%a: bf16):
    %i = ein.index 0 : index
    %c6 = arith.constant 6 : index
    %keep = arith.cmpi ult, %i, %c6 : index
    %w = arith.extf %a : bf16 to f32
    %z = arith.constant 0.0 : f32
    %v = arith.select %keep, %w, %z : f32
    ein.yield %v : f32
  }
  return %s : tensor<4xbf16>
}

// -----

// A block matmul stays a library gemm (no kernel); the f32 row maximum
// (12 long) reduces straight into its result, from -inf. Kernels are numbered in
// program order.

// CHECK-LABEL: func.func @gemm_then_max
// CHECK: ein.join_agg add
// CHECK-NOT: ein.kernel
// CHECK-SAME: : tensor<8x12xf32>
// CHECK: ein.join_agg max {{.*}} ein.kernel = "ein_kernel_0"
// CHECK: func.func @ein_kernel_0(%[[C:.*]]: memref<8x12xf32>, %[[M:.*]]: memref<8xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%[[M]] : memref<8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[C]] : memref<8x12xf32>) outs(%[[M]] : memref<8xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @gemm_then_max(%a: tensor<8x16xf32>, %b: tensor<16x12xf32>) -> tensor<8xf32> {
  %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x16xf32>, tensor<16x12xf32>) out[d0, d2] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<8x12xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    ein.yield %m : f32
  }
  %m = ein.join_agg max ins(%c[d0, d1] : tensor<8x12xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0>} : tensor<8xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %m : tensor<8xf32>
}

// -----

// A bf16 matmul as ein-import writes linalg's (the product rounded to bf16,
// then extended to the f32 accumulator) is a library gemm too; a product
// changed before it is summed is not.

// CHECK-LABEL: func.func @imported_bf16_matmul
// CHECK: ein.join_agg add
// CHECK-NOT: ein.kernel
// CHECK-SAME: : tensor<8x4xbf16>
// CHECK: ein.join_agg add {{.*}} ein.kernel = "ein_kernel_0"
// CHECK: func.func @ein_kernel_0
// CHECK: arith.negf
func.func @imported_bf16_matmul(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>) {
  %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x16xbf16>, tensor<16x4xbf16>) out[d0, d2] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<8x4xbf16> {
  ^bb0(%x: bf16, %y: bf16):
    %m = arith.mulf %x, %y : bf16
    %e = arith.extf %m : bf16 to f32
    ein.yield %e : f32
  }
  %d = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<8x16xbf16>, tensor<16x4xbf16>) out[d0, d2] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<8x4xbf16> {
  ^bb0(%x: bf16, %y: bf16):
    %m = arith.mulf %x, %y : bf16
    %e = arith.extf %m : bf16 to f32
    %n = arith.negf %e : f32
    ein.yield %n : f32
  }
  return %c, %d : tensor<8x4xbf16>, tensor<8x4xbf16>
}

// -----

// RMSNorm: the f32 sum of squares per row, then x / sqrt(sum / n + eps) * w.

// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[LEAD:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @rms_norm
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<4x64xbf16>, %[[W:.*]]: memref<64xbf16>, %[[OUT:.*]]: memref<4x64xbf16>)
// CHECK: %[[SUM:.*]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[FULL]], #[[LEAD]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<4x64xbf16>) outs(%[[SUM]] : memref<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[FULL]], #[[LAST]], #[[LEAD]], #[[FULL]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[W]], %[[SUM]] : memref<4x64xbf16>, memref<64xbf16>, memref<4xf32>) outs(%[[OUT]] : memref<4x64xbf16>)
// CHECK: arith.constant 6.400000e+01 : f32
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: math.sqrt
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.dealloc %[[SUM]]
func.func @rms_norm(%x: tensor<4x64xbf16>, %w: tensor<64xbf16>) -> tensor<4x64xbf16> {
  %y = ein.rms_norm %x, %w eps 1.0e-05 {device = 0 : i64} : tensor<4x64xbf16>, tensor<64xbf16>
  return %y : tensor<4x64xbf16>
}

// -----

// Softmax over dimension 0 of an f32 block works in the result buffer:
// copy, row maximum, sum of exponentials, normalise.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @softmax
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<4x8xf32>) outs(%[[OUT]] : memref<4x8xf32>)
// CHECK: %[[MAX:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[SUM:.*]] = memref.alloc() : memref<8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]]], iterator_types = ["reduction", "parallel"]} ins(%[[OUT]] : memref<4x8xf32>) outs(%[[MAX]] : memref<8xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[COL]]], iterator_types = ["reduction", "parallel"]} ins(%[[OUT]], %[[MAX]] : {{.*}}) outs(%[[SUM]] : memref<8xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[MAX]], %[[SUM]] : {{.*}}) outs(%[[OUT]] : memref<4x8xf32>)
// CHECK: arith.divf
// CHECK-DAG: memref.dealloc %[[MAX]]
// CHECK-DAG: memref.dealloc %[[SUM]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = ein.softmax %x dim 0 {device = 2 : i64} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Attention needs no kernel on the CPU: ein-write-bundle makes it the
// runtime's fused attention step, so the block keeps no ein.kernel and the
// kernels module stays empty.

// CHECK-LABEL: func.func @attention
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, device = 0 : i64, group = 2 : i64, query_offset = 8 : i64} :
// CHECK-NOT: ein.kernel =
// CHECK: module @ein_kernels attributes {ein.kernel_signatures = "{\22format\22:\22ein-kernel-signatures\22,\22kernels\22:{}}", ein.kernel_target = "cpu"} {
// CHECK-NEXT: }
func.func @attention(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>) -> tensor<1x4x8x16xf16> {
  %o = ein.attention %q, %k, %v {causal, group = 2 : i64, query_offset = 8 : i64, device = 0 : i64} : tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16> -> tensor<1x4x8x16xf16>
  return %o : tensor<1x4x8x16xf16>
}

// -----

// A short reduction (2 points a result, as RoPE's 2 x 2 rotation) is
// unrolled: one elementwise pass over the result, each input read at both
// points through constant indices, the products summed in f32 from 0 in
// loop order and rounded once; no scratch accumulator, fill or rounding
// pass. Its ein.index of the reduced loop is the point's coordinate.

// CHECK-DAG: #[[P0:.*]] = affine_map<(d0, d1) -> (d0, 0, d1)>
// CHECK-DAG: #[[P1:.*]] = affine_map<(d0, d1) -> (d0, 1, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @pair_sum
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<3x2x5xbf16>, %[[R:.*]]: memref<3x5xbf16>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[P0]], #[[P1]], #[[OUT]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[X]] : memref<3x2x5xbf16>, memref<3x2x5xbf16>) outs(%[[R]] : memref<3x5xbf16>)
// CHECK: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: bf16):
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[K0:.*]] = arith.constant 0 : index
// CHECK: %[[FA:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK: arith.index_cast %[[K0]] : index to i64
// CHECK: %[[PA:.*]] = arith.mulf %[[FA]],
// CHECK: %[[S0:.*]] = arith.addf %[[ZERO]], %[[PA]] : f32
// CHECK: %[[K1:.*]] = arith.constant 1 : index
// CHECK: %[[FB:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: arith.index_cast %[[K1]] : index to i64
// CHECK: %[[PB:.*]] = arith.mulf %[[FB]],
// CHECK: %[[S1:.*]] = arith.addf %[[S0]], %[[PB]] : f32
// CHECK: %[[T:.*]] = arith.truncf %[[S1]] : f32 to bf16
// CHECK: linalg.yield %[[T]] : bf16
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @pair_sum(%x: tensor<3x2x5xbf16>) -> tensor<3x5xbf16> {
  %s = ein.join_agg add ins(%x[d0, d1, d2] : tensor<3x2x5xbf16>) out[d0, d2] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<3x5xbf16> {
  ^bb0(%a: bf16):
    %k = ein.index 1 : index
    %f = arith.extf %a : bf16 to f32
    %ki = arith.index_cast %k : index to i64
    %w = arith.uitofp %ki : i64 to f32
    %v = arith.mulf %f, %w : f32
    ein.yield %v : f32
  }
  return %s : tensor<3x5xbf16>
}

// -----

// A boolean mask block (a padding mask and the causal triangle, which
// several attentions read): the kernel writes the i1 its region yields, a
// byte an element, with no float conversion.

// CHECK-LABEL: func.func @mask
// CHECK: func.func @ein_kernel_0(%[[M:.*]]: memref<2x6xi64>, %[[OUT:.*]]: memref<2x6x6xi1>)
// CHECK: linalg.generic {{.*}} ins(%[[M]] : memref<2x6xi64>) outs(%[[OUT]] : memref<2x6x6xi1>)
// CHECK: %[[KEEP:.*]] = arith.cmpi ne
// CHECK: %[[BOTH:.*]] = arith.andi %[[KEEP]], %{{.*}} : i1
// CHECK-NEXT: linalg.yield %[[BOTH]] : i1
func.func @mask(%m: tensor<2x6xi64>) -> tensor<2x6x6xi1> {
  %y = ein.join_agg none ins(%m[d0, d2] : tensor<2x6xi64>) out[d0, d1, d2] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 0, 0>} : tensor<2x6x6xi1> {
  ^bb0(%a: i64):
    %zero = arith.constant 0 : i64
    %keep = arith.cmpi ne, %a, %zero : i64
    %i = ein.index 1 : index
    %j = ein.index 2 : index
    %causal = arith.cmpi ule, %j, %i : index
    %both = arith.andi %keep, %causal : i1
    ein.yield %both : i1
  }
  return %y : tensor<2x6x6xi1>
}

// -----

// A grouped convolution's block (2 groups: 2 input and 3 output channels
// each): one generic over n, oh, ow, f, kh, kw, c whose input channel is
// the group's first, (f floordiv 3) * 2, plus c; the filter holds one
// group's 2 channels.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d3 floordiv 3) * 2 + d6, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[FILTER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d6, d4, d5)>
// CHECK-DAG: #[[OUTMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @grouped_conv_block
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<1x4x5x5xf32>, %[[W:.*]]: memref<6x2x3x3xf32>, %[[Y:.*]]: memref<1x6x3x3xf32>)
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[FILTER]], #[[OUTMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X]], %[[W]] : memref<1x4x5x5xf32>, memref<6x2x3x3xf32>) outs(%[[Y]] : memref<1x6x3x3xf32>)
// LLVM-LABEL: func.func @grouped_conv_block
// LLVM: llvm.func internal @ein_kernel_0.body
func.func @grouped_conv_block(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %c = ein.conv %x, %w {device = 0 : i64, layout = "nchw", groups = 2 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
  return %c : tensor<1x6x3x3xf32>
}
