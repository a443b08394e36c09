// RUN: ein-opt %s -split-input-file --ein-lower-to-cuda=compile=false | FileCheck %s

// A bf16 row sum (16 long: longer than the unrolled reductions of
// ein-lower-to-cpu.mlir): three kernels (fill the f32 scratch, 4 lanes a thread;
// reduce into it, a warp a row; round into the result), 256 threads a
// block. The scratch is a trailing argument of the block's kernel function,
// which the bundle allocates. In the reduction each lane folds its 8-element
// chunks (one 16-byte load) from 0, the lanes combine by xor shuffles, and
// lane 0 adds the sum to the scratch.

// CHECK-LABEL: func.func @rows
// CHECK: ein.join_agg add {{.*}}ein.kernel = "ein_kernel_0"
// The signature table says what each launch does with its buffers: the
// fill writes the scratch, the reduction adds into it, the rounding reads it.
// CHECK: module @ein_kernels attributes {ein.kernel_signatures = "{\22format\22:\22ein-kernel-signatures\22,\22kernels\22:{\22ein_kernel_0_0\22:{\22args\22:[{\22access\22:\22write\22,\22dtype\22:\22f32\22,\22shape\22:[4]}],\22scalars\22:0},\22ein_kernel_0_1\22:{\22args\22:[{\22access\22:\22read\22,\22dtype\22:\22bf16\22,\22shape\22:[4,16]},{\22access\22:\22readwrite\22,\22dtype\22:\22f32\22,\22shape\22:[4]}],\22scalars\22:0},\22ein_kernel_0_2\22:{\22args\22:[{\22access\22:\22read\22,\22dtype\22:\22f32\22,\22shape\22:[4]},{\22access\22:\22write\22,\22dtype\22:\22bf16\22,\22shape\22:[4]}],\22scalars\22:0}}}", ein.kernel_target = "cuda", gpu.container_module}
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<4x16xbf16>, %[[OUT:.*]]: memref<4xbf16>, %[[ACC:.*]]: memref<4xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_0 blocks in (%[[ONE]], %[[ONE]], %[[ONE]]) threads in (%[[THREADS]], %[[ONE]], %[[ONE]]) args(%[[ACC]] : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func @ein_device::@ein_kernel_0_1 {{.*}} args(%[[X]] : memref<4x16xbf16>, %[[ACC]] : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func @ein_device::@ein_kernel_0_2 {{.*}} args(%[[ACC]] : memref<4xf32>, %[[OUT]] : memref<4xbf16>)
// CHECK-NEXT: return
// CHECK: gpu.module @ein_device
// CHECK: gpu.func @ein_kernel_0_0(%[[A:.*]]: memref<4xf32>) kernel
// CHECK-NOT: load
// CHECK: vector.store %{{.*}}, %[[A]][%{{.*}}] {alignment = 16 : i64} : memref<4xf32>, vector<4xf32>
// CHECK: gpu.func @ein_kernel_0_1(%[[IN:.*]]: memref<4x16xbf16>, %[[S:.*]]: memref<4xf32>) kernel
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[WARP:.*]] = arith.constant 32 : index
// CHECK: %[[LIN:.*]] = arith.addi
// CHECK: %[[ROW:.*]] = arith.divui %[[LIN]], %[[WARP]] : index
// CHECK: %[[LANE:.*]] = arith.remui %[[LIN]], %[[WARP]] : index
// CHECK: scf.if
// CHECK: %[[FROM:.*]] = arith.muli %[[LANE]]
// CHECK: %[[PART:.*]] = scf.for %[[K:.*]] = %[[FROM]] to %{{.*}} step %{{.*}} iter_args(%[[CARRY:.*]] = %[[ZERO]]) -> (f32)
// CHECK: vector.load %[[IN]][%{{.*}}, %[[K]]] {alignment = 16 : i64} : memref<4x16xbf16>, vector<8xbf16>
// CHECK-COUNT-8: math.exp
// CHECK: scf.yield
// CHECK: gpu.shuffle xor %[[PART]]
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]]
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[OLD:.*]] = memref.load %[[S]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK: memref.store %[[NEW]], %[[S]]
// CHECK: gpu.func @ein_kernel_0_2(%[[FROM:.*]]: memref<4xf32>, %[[TO:.*]]: memref<4xbf16>) kernel
// CHECK: arith.truncf %{{.*}} : f32 to bf16
module attributes {ein.target = #ein.target<devices = 2, chip = "sm_90">} {
  func.func @rows(%x: tensor<4x16xbf16>) -> tensor<4xbf16> {
    %s = ein.join_agg add ins(%x[d0, d1] : tensor<4x16xbf16>) out[d0] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 4, 0>} : tensor<4xbf16> {
    ^bb0(%a: bf16):
      %w = arith.extf %a : bf16 to f32
      %e = math.exp %w : f32
      ein.yield %e : f32
    }
    return %s : tensor<4xbf16>
  }
}

// -----

// An elementwise map over 3x300 f32 with a whole-tensor column index: each
// thread takes 4 consecutive columns (16 bytes) with one vector load and one
// vector store, 225 threads in one block; the region runs once a lane, its
// ein.index reading the lane's column plus the block's offset, 100. The
// output is written without being read.

// CHECK-LABEL: func.func @masked
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_0 blocks in (%[[ONE:.*]], %[[ONE]], %[[ONE]])
// CHECK: gpu.func @ein_kernel_0_0(%[[X:.*]]: memref<3x300xf32>, %[[Y:.*]]: memref<3x300xf32>) kernel
// CHECK-DAG: %[[C75:.*]] = arith.constant 75 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[OFF:.*]] = arith.constant 100 : index
// CHECK-DAG: %[[OFF3:.*]] = arith.constant 103 : index
// CHECK-DAG: %[[POINTS:.*]] = arith.constant 225 : index
// CHECK: arith.cmpi ult, %{{.*}}, %[[POINTS]] : index
// CHECK: %[[QUAD:.*]] = arith.remui %{{.*}}, %[[C75]] : index
// CHECK: %[[REST:.*]] = arith.divui %{{.*}}, %[[C75]] : index
// CHECK: %[[COL:.*]] = arith.muli %[[QUAD]], %[[C4]] : index
// CHECK: %[[ROW:.*]] = arith.remui %[[REST]], %[[C3]] : index
// CHECK: %[[V:.*]] = vector.load %[[X]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<3x300xf32>, vector<4xf32>
// CHECK: vector.extract %[[V]][0]
// CHECK: arith.addi %[[COL]], %[[OFF]] : index
// CHECK: vector.extract %[[V]][3]
// CHECK: arith.addi %[[COL]], %[[OFF3]] : index
// CHECK: %[[R:.*]] = vector.from_elements
// CHECK-NOT: vector.load %[[Y]]
// CHECK: vector.store %[[R]], %[[Y]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<3x300xf32>, vector<4xf32>
module attributes {ein.target = #ein.target<devices = 2, chip = "sm_90">} {
  func.func @masked(%x: tensor<3x300xf32>) -> tensor<3x300xf32> {
    %y = ein.join_agg none ins(%x[d0, d1] : tensor<3x300xf32>) out[d0, d1] attributes {device = 0 : i64, ein.loop_offsets = array<i64: 0, 100>} : tensor<3x300xf32> {
    ^bb0(%a: f32):
      %j = ein.index 1 : index
      %c = arith.constant 250 : index
      %keep = arith.cmpi ult, %j, %c : index
      %z = arith.constant 0.0 : f32
      %v = arith.select %keep, %a, %z : f32
      ein.yield %v : f32
    }
    return %y : tensor<3x300xf32>
  }
}

// -----

// RMSNorm is one kernel, a warp a row: the lanes' sums of squares over
// 16-byte chunks, an xor all-reduce so every lane has the row's total, then
// the row read again, normalised, scaled by the weight and stored 8 lanes
// at a time. 4 rows of 32 threads: one block.

// CHECK-LABEL: func.func @norm
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<2x2x64xbf16>, %[[W:.*]]: memref<64xbf16>, %[[OUT:.*]]: memref<2x2x64xbf16>)
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_rms_norm blocks in (%[[ONE:.*]], %[[ONE]], %[[ONE]]) threads in (%{{.*}}, %[[ONE]], %[[ONE]]) args(%[[X]] : memref<2x2x64xbf16>, %[[W]] : memref<64xbf16>, %[[OUT]] : memref<2x2x64xbf16>)
// CHECK-NEXT: return
// CHECK: gpu.func @ein_kernel_0_rms_norm(%[[XA:.*]]: memref<2x2x64xbf16>, %[[WA:.*]]: memref<64xbf16>, %[[OA:.*]]: memref<2x2x64xbf16>) kernel
// CHECK-DAG: %[[N:.*]] = arith.constant 6.400000e+01 : f32
// CHECK-DAG: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[PART:.*]] = scf.for {{.*}} -> (f32)
// CHECK: vector.load %[[XA]]{{.*}} : memref<2x2x64xbf16>, vector<8xbf16>
// CHECK: scf.yield
// CHECK-COUNT-5: gpu.shuffle xor
// The mean is a division of a kernel with a bf16 result: approximate (afn).
// CHECK: %[[MEAN:.*]] = arith.divf %{{.*}}, %[[N]] fastmath<afn> : f32
// CHECK: %[[SHIFTED:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
// CHECK: %[[INV:.*]] = math.rsqrt %[[SHIFTED]] : f32
// CHECK: scf.for
// CHECK: vector.load %[[XA]]
// CHECK: vector.load %[[WA]]
// CHECK: arith.mulf %{{.*}}, %[[INV]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: vector.store %{{.*}}, %[[OA]]{{.*}} {alignment = 16 : i64} : memref<2x2x64xbf16>, vector<8xbf16>
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @norm(%x: tensor<2x2x64xbf16>, %w: tensor<64xbf16>) -> tensor<2x2x64xbf16> {
    %y = ein.rms_norm %x, %w eps 1.0e-05 {device = 0 : i64} : tensor<2x2x64xbf16>, tensor<64xbf16>
    return %y : tensor<2x2x64xbf16>
  }
}

// -----

// LayerNorm with a weight and a bias, rows of 512 bf16 held in registers
// (2 chunks a lane): the sum, shuffled, is the mean; the squared deviations
// from it, shuffled, the variance; then each deviation (computed once, for
// the variance), times the reciprocal root, times the weight, plus the
// bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_layer_norm {{.*}} args(%{{.*}} : memref<4x512xbf16>, %{{.*}} : memref<512xbf16>, %{{.*}} : memref<512xbf16>, %{{.*}} : memref<4x512xbf16>)
// CHECK: gpu.func @ein_kernel_0_layer_norm(%[[XA:.*]]: memref<4x512xbf16>, %[[WA:.*]]: memref<512xbf16>, %[[BA:.*]]: memref<512xbf16>, %[[OA:.*]]: memref<4x512xbf16>) kernel
// CHECK-NOT: scf.for
// CHECK-COUNT-2: vector.load %[[XA]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: %[[MEAN:.*]] = arith.divf
// CHECK: arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: %[[INV:.*]] = math.rsqrt
// CHECK-NOT: vector.load %[[XA]]
// CHECK: vector.load %[[WA]]
// CHECK: vector.load %[[BA]]
// CHECK: %[[N:.*]] = arith.mulf %{{.*}}, %[[INV]] : f32
// CHECK: %[[S:.*]] = arith.mulf %[[N]], %{{.*}} : f32
// CHECK: arith.addf %[[S]], %{{.*}} : f32
// CHECK: vector.store %{{.*}}, %[[OA]]
// CHECK: gpu.return
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @layer_norm(%x: tensor<4x512xbf16>, %w: tensor<512xbf16>, %b: tensor<512xbf16>) -> tensor<4x512xbf16> {
    %y = ein.layer_norm %x weight %w bias %b eps 1.0e-05 {device = 0 : i64} : tensor<4x512xbf16>, tensor<512xbf16>, tensor<512xbf16>
    return %y : tensor<4x512xbf16>
  }
}

// -----

// Without a weight or a bias, rows of 16384 f32 (128 chunks a lane: too
// many for a block of 256 threads to hold) are a warp's, read three times
// (the sum, the squared deviations, the output), 8 chunks an iteration: two
// reductions over the row, then the output loop, which loads x alone. Many
// chunks a lane take many registers: blocks of 2 warps.
// CHECK-LABEL: func.func @bare_layer_norm
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_layer_norm blocks in (%{{.*}}) threads in (%c64,
// CHECK: gpu.func @ein_kernel_0_layer_norm(%[[XA:.*]]: memref<2x16384xf32>, %[[OA:.*]]: memref<2x16384xf32>) kernel
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: math.rsqrt
// CHECK: scf.for
// CHECK-COUNT-8: vector.load %[[XA]]
// CHECK-NOT: vector.load
// CHECK: vector.store %{{.*}}, %[[OA]]
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @bare_layer_norm(%x: tensor<2x16384xf32>) -> tensor<2x16384xf32> {
    %y = ein.layer_norm %x eps 1.0e-05 {device = 0 : i64} : tensor<2x16384xf32>
    return %y : tensor<2x16384xf32>
  }
}

// -----

// Rows of 4096 bf16 (512 chunks of 8) are a block's: 256 threads, one
// block a row, each thread holding 2 chunks, 256 apart (consecutive threads
// read consecutive chunks). Each statistic is summed in the warp, the warps'
// sums through shared memory (a slot a warp, a barrier) and added up by
// every thread; LayerNorm's mean and squared deviations take a slot array
// each. The row is read once and written once.
// CHECK-LABEL: func.func @block_layer_norm
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_layer_norm blocks in (%c6, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK: gpu.func @ein_kernel_0_layer_norm(%[[XA:.*]]: memref<6x4096xbf16>, %{{.*}}: memref<4096xbf16>, %{{.*}}: memref<4096xbf16>, %[[OA:.*]]: memref<6x4096xbf16>) workgroup(%[[MEAN:.*]] : memref<8xf32, #gpu.address_space<workgroup>>, %[[DEV:.*]] : memref<8xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: %[[ROW:.*]] = gpu.block_id x
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NOT: scf.for
// CHECK-COUNT-2: vector.load %[[XA]]
// CHECK-NOT: vector.load %[[XA]]
// CHECK: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[MEAN]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[MEAN]]
// CHECK: memref.store %{{.*}}, %[[DEV]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[DEV]]
// CHECK: math.rsqrt
// CHECK-NOT: vector.load %[[XA]]
// CHECK-COUNT-2: vector.store %{{.*}}, %[[OA]]
// CHECK: gpu.return
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @block_layer_norm(%x: tensor<6x4096xbf16>, %w: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> tensor<6x4096xbf16> {
    %y = ein.layer_norm %x weight %w bias %b eps 1.0e-05 {device = 0 : i64} : tensor<6x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>
    return %y : tensor<6x4096xbf16>
  }
}

// -----

// A gather block (rows 34..67 of a table) is the generic kernel over its
// result, with the table, which it loads at computed rows, as one more
// parameter: the index read, less the block's first row, checked against
// its 34 rows, the row loaded at a clamped place and kept where inside (8
// lanes a thread, one vector store).
// CHECK-LABEL: func.func @lookup
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_0 {{.*}} args(%{{.*}} : memref<2x8xi64>, %{{.*}} : memref<2x8x64xbf16>, %{{.*}} : memref<34x64xbf16>)
// CHECK: gpu.func @ein_kernel_0_0(%[[IDS:.*]]: memref<2x8xi64>, %[[OUT:.*]]: memref<2x8x64xbf16>, %[[TABLE:.*]]: memref<34x64xbf16>) kernel
// CHECK: %[[ID:.*]] = memref.load %[[IDS]]
// CHECK: %[[ROW:.*]] = arith.subi %[[ID]], %c34_i64 : i64
// CHECK: arith.cmpi sle, %[[ROW]], %c33_i64 : i64
// CHECK: arith.cmpi sge, %[[ROW]], %c0_i64 : i64
// CHECK: memref.load %[[TABLE]]
// CHECK: arith.select
// CHECK: vector.store {{.*}}, %[[OUT]]
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @lookup(%t: tensor<34x64xbf16>, %i: tensor<2x8xi64>) -> tensor<2x8x64xbf16> {
    %y = ein.gather %t[%i] {row_offset = 34 : i64, device = 0 : i64} : tensor<34x64xbf16>, tensor<2x8xi64> -> tensor<2x8x64xbf16>
    return %y : tensor<2x8x64xbf16>
  }
}

// -----

// Rows of 1024 bf16 are held in registers: each lane loads its 4 chunks
// at once (no loop), sums their squares, and scales the same values (the
// row is read once).
// CHECK-LABEL: func.func @held_norm
// CHECK: gpu.func @ein_kernel_0_rms_norm(%[[XA:.*]]: memref<8x1024xbf16>, %[[WA:.*]]: memref<1024xbf16>, %[[OA:.*]]: memref<8x1024xbf16>) kernel
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load %[[XA]]
// CHECK-NOT: vector.load %[[XA]]
// CHECK: math.rsqrt
// CHECK-NOT: vector.load %[[XA]]
// CHECK-COUNT-4: vector.store %{{.*}}, %[[OA]]
// CHECK: gpu.return
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @held_norm(%x: tensor<8x1024xbf16>, %w: tensor<1024xbf16>) -> tensor<8x1024xbf16> {
    %y = ein.rms_norm %x, %w eps 1.0e-05 {device = 0 : i64} : tensor<8x1024xbf16>, tensor<1024xbf16>
    return %y : tensor<8x1024xbf16>
  }
}

// -----

// Rows of 65536 bf16 (too long for a block of 256 threads to hold: 256
// chunks a lane of a warp) are read twice, 8 chunks an iteration (step 8 x
// 32 lanes x 8): 8 loads in flight, then 8 x 8 squares; the second loop
// loads 8 chunks and their weights before its 8 stores. RMSNorm's warps a
// row run in blocks of 8 warps (faster inside LLaMA blocks).
// CHECK-LABEL: func.func @wide_norm
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_rms_norm blocks in (%{{.*}}) threads in (%c256,
// CHECK: gpu.func @ein_kernel_0_rms_norm(%[[XA:.*]]: memref<2x65536xbf16>, %[[WA:.*]]: memref<65536xbf16>, %[[OA:.*]]: memref<2x65536xbf16>) kernel
// CHECK-DAG: %[[STEP:.*]] = arith.constant 2048 : index
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[STEP]] iter_args
// CHECK-COUNT-8: vector.load %[[XA]]
// CHECK-NOT: vector.load
// CHECK: scf.yield
// CHECK: math.rsqrt
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[STEP]] {
// CHECK-COUNT-8: vector.load
// CHECK-NOT: vector.store
// CHECK: vector.load %[[WA]]
// CHECK-COUNT-8: vector.store %{{.*}}, %[[OA]]
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @wide_norm(%x: tensor<2x65536xbf16>, %w: tensor<65536xbf16>) -> tensor<2x65536xbf16> {
    %y = ein.rms_norm %x, %w eps 1.0e-05 {device = 0 : i64} : tensor<2x65536xbf16>, tensor<65536xbf16>
    return %y : tensor<2x65536xbf16>
  }
}

// -----

// Causal GQA attention in bf16 with head dimension 64 is the runtime's
// fused attention step (cuDNN's SDPA or its own kernel): no kernel is
// generated for it.

// CHECK-LABEL: func.func @fused_attention
// CHECK: ein.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, device = 0 : i64, group = 2 : i64, query_offset = 8 : i64} :
// CHECK: module @ein_kernels attributes {ein.kernel_signatures = "{{.*}}", ein.kernel_target = "cuda", gpu.container_module} {
// CHECK-NEXT: gpu.module @ein_device {
// CHECK-NEXT: }
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @fused_attention(%q: tensor<1x4x8x64xbf16>, %k: tensor<1x2x8x64xbf16>, %v: tensor<1x2x8x64xbf16>) -> tensor<1x4x8x64xbf16> {
    %o = ein.attention %q, %k, %v {causal, group = 2 : i64, query_offset = 8 : i64, device = 0 : i64} : tensor<1x4x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x4x8x64xbf16>
    return %o : tensor<1x4x8x64xbf16>
  }
}

// -----

// A head dimension of 16 is neither cuDNN's nor the runtime kernel's: the
// block gets the generic kernel, its stages as launches over scratch
// buffers: f32 scores from q and k (KV head h floordiv 2), the masked
// softmax's row maximum and sum, the weighted values in f32, one rounding
// into the f16 result.

// CHECK-DAG: #[[GROUP:.*]] = affine_map<()[s0] -> (s0 floordiv 2)>
// CHECK-LABEL: func.func @generic_attention
// CHECK: ein.attention {{.*}}ein.kernel = "ein_kernel_0"
// CHECK: func.func @ein_kernel_0(%[[Q:.*]]: memref<1x4x8x16xf16>, %[[K:.*]]: memref<1x2x8x16xf16>, %[[V:.*]]: memref<1x2x8x16xf16>, %[[O:.*]]: memref<1x4x8x16xf16>, %[[S:.*]]: memref<1x4x8x8xf32>, %[[MAX:.*]]: memref<1x4x8xf32>, %[[SUM:.*]]: memref<1x4x8xf32>, %[[ACC:.*]]: memref<1x4x8x16xf32>)
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_1 {{.*}} args(%[[Q]] : memref<1x4x8x16xf16>, %[[K]] : memref<1x2x8x16xf16>, %[[S]] : memref<1x4x8x8xf32>)
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_9 {{.*}} args(%[[S]] : memref<1x4x8x8xf32>, %[[V]] : memref<1x2x8x16xf16>, %[[ACC]] : memref<1x4x8x16xf32>)
// CHECK-NEXT: gpu.launch_func @ein_device::@ein_kernel_0_10 {{.*}} args(%[[ACC]] : memref<1x4x8x16xf32>, %[[O]] : memref<1x4x8x16xf16>)
// CHECK: gpu.func @ein_kernel_0_1(%[[QA:.*]]: memref<1x4x8x16xf16>, %[[KA:.*]]: memref<1x2x8x16xf16>
// CHECK: %[[H:.*]] = arith.remui %{{.*}}, %c4 : index
// CHECK: vector.load %[[QA]][%c0, %[[H]],
// CHECK: %[[KVH:.*]] = affine.apply #[[GROUP]]()[%[[H]]]
// CHECK: vector.load %[[KA]][%c0, %[[KVH]],
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @generic_attention(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>) -> tensor<1x4x8x16xf16> {
    %o = ein.attention %q, %k, %v {causal, group = 2 : i64, query_offset = 8 : i64, device = 0 : i64} : tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16> -> tensor<1x4x8x16xf16>
    return %o : tensor<1x4x8x16xf16>
  }
}

// -----

// A max pooling's window operand only bounds its loops: the launch does not
// pass it, and the signature table lists what the kernel reads and writes
// (the result read too: each thread folds into what the fill wrote). (A
// window of more than 64 elements: smaller ones are unrolled, below.)

// CHECK-LABEL: func.func @max_pool
// CHECK: module @ein_kernels attributes {ein.kernel_signatures = "{{.*}}\22ein_kernel_0_1\22:{\22args\22:[{\22access\22:\22read\22,\22dtype\22:\22f32\22,\22shape\22:[1,20,20,4]},{\22access\22:\22readwrite\22,\22dtype\22:\22f32\22,\22shape\22:[1,6,6,4]}],\22scalars\22:0}}}"
// CHECK: func.func @ein_kernel_0(%[[X:.*]]: memref<1x20x20x4xf32>, %[[OUT:.*]]: memref<1x6x6x4xf32>, %{{.*}}: memref<9x9xf32>)
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_1 {{.*}} args(%[[X]] : memref<1x20x20x4xf32>, %[[OUT]] : memref<1x6x6x4xf32>)
// CHECK: gpu.func @ein_kernel_0_1(%{{.*}}: memref<1x20x20x4xf32>, %{{.*}}: memref<1x6x6x4xf32>) kernel
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @max_pool(%x: tensor<1x20x20x4xf32>) -> tensor<1x6x6x4xf32> {
    %p = ein.pool max %x {layout = "nhwc", window = array<i64: 9, 9>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, device = 0 : i64} : tensor<1x20x20x4xf32> -> tensor<1x6x6x4xf32>
    return %p : tensor<1x6x6x4xf32>
  }
}

// -----

// A small window (ResNet's 3x3 / 2 max pool with padding 1) is one kernel:
// each thread reads its window's nine places, clamped into the input and
// replaced by -inf in the padding, and writes its output once; no padded
// copy, no fill, no f32 accumulator, no rounding pass.

// CHECK-LABEL: func.func @small_max_pool
// CHECK: module @ein_kernels attributes {ein.kernel_signatures = "{{.*}}\22kernels\22:{\22ein_kernel_0_0\22:{\22args\22:[{\22access\22:\22write\22,\22dtype\22:\22bf16\22,\22shape\22:[1,4,4,4]},{\22access\22:\22read\22,\22dtype\22:\22bf16\22,\22shape\22:[1,4,8,8]}],\22scalars\22:0}}}"
// CHECK: gpu.launch_func @ein_device::@ein_kernel_0_0
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @ein_kernel_0_0
// CHECK-COUNT-9: arith.select %{{.*}}, %{{.*}}, %cst{{.*}} : f32
// CHECK-NOT: memref.load
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: memref.store
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @small_max_pool(%x: tensor<1x4x8x8xbf16>) -> tensor<1x4x4x4xbf16> {
    %p = ein.pool max %x {layout = "nchw", window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, device = 0 : i64} : tensor<1x4x8x8xbf16> -> tensor<1x4x4x4xbf16>
    return %p : tensor<1x4x4x4xbf16>
  }
}

// -----

// Rows of 8192 bf16 for RMSNorm: a block's, 4 chunks a thread; its one
// statistic takes one slot array. Rows of 1024 (half a chunk a thread of
// 256, one of 128) stay a warp's.
// CHECK-LABEL: func.func @norms_block_and_warp
// CHECK: gpu.launch_func @ein_device::@[[RMS:.*_rms_norm]] blocks in (%c4, %c1, %c1) threads in (%c256,
// CHECK: gpu.func @[[RMS]](%[[XA:.*]]: memref<4x8192xbf16>, %{{.*}}: memref<8192xbf16>, %{{.*}}: memref<4x8192xbf16>) workgroup(%[[SLOTS:.*]] : memref<8xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load %[[XA]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SLOTS]]
// CHECK: gpu.return
// CHECK: gpu.func @{{.*}}_rms_norm(%{{.*}}: memref<8x1024xbf16>, %{{.*}}: memref<1024xbf16>, %{{.*}}: memref<8x1024xbf16>) kernel {
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @norms_block_and_warp(%x: tensor<4x8192xbf16>, %w: tensor<8192xbf16>, %y: tensor<8x1024xbf16>, %v: tensor<1024xbf16>) -> (tensor<4x8192xbf16>, tensor<8x1024xbf16>) {
    %r = ein.rms_norm %x, %w eps 1.0e-05 {device = 0 : i64} : tensor<4x8192xbf16>, tensor<8192xbf16>
    %s = ein.rms_norm %y, %v eps 1.0e-05 {device = 0 : i64} : tensor<8x1024xbf16>, tensor<1024xbf16>
    return %r, %s : tensor<4x8192xbf16>, tensor<8x1024xbf16>
  }
}

// -----

// Grouped convolution blocks (2 groups): in bf16 the cuDNN conv step takes
// it (no kernel); in f32 a generated kernel, a thread an output element,
// summing the window and its group's 2 input channels, read at channel
// c + (f floordiv 3) * 2.
// CHECK-DAG: #[[CHAN:.*]] = affine_map<(d0)[s0] -> (d0 + (s0 floordiv 3) * 2)>
// CHECK-LABEL: func.func @grouped_conv_blocks
// CHECK: ein.conv %{{.*}}, %{{.*}} {device = 0 : i64, dilations = array<i64: 1, 1>, groups = 2 : i64, layout = "nchw", {{.*}} : tensor<1x4x5x5xbf16>
// CHECK: ein.conv %{{.*}}, %{{.*}} {device = 0 : i64, dilations = array<i64: 1, 1>, ein.kernel = "ein_kernel_0", groups = 2 : i64, {{.*}} : tensor<1x4x5x5xf32>
// CHECK: gpu.func @ein_kernel_0_1(%[[X:.*]]: memref<1x4x5x5xf32>, %[[W:.*]]: memref<6x2x3x3xf32>, %{{.*}}: memref<1x6x3x3xf32>) kernel
// CHECK: %[[F:.*]] = arith.remui %{{.*}}, %c6 : index
// CHECK: scf.for %[[C:.*]] = %c0 to %c2 step %c1
// CHECK: %[[XC:.*]] = affine.apply #[[CHAN]](%[[C]])[%[[F]]]
// CHECK: memref.load %[[X]][%c0, %[[XC]],
// CHECK: memref.load %[[W]][%[[F]], %[[C]],
module attributes {ein.target = #ein.target<devices = 1, chip = "sm_90">} {
  func.func @grouped_conv_blocks(%x: tensor<1x4x5x5xbf16>, %w: tensor<6x2x3x3xbf16>, %y: tensor<1x4x5x5xf32>, %v: tensor<6x2x3x3xf32>) -> (tensor<1x6x3x3xbf16>, tensor<1x6x3x3xf32>) {
    %c = ein.conv %x, %w {device = 0 : i64, layout = "nchw", groups = 2 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x5x5xbf16>, tensor<6x2x3x3xbf16> -> tensor<1x6x3x3xbf16>
    %d = ein.conv %y, %v {device = 0 : i64, layout = "nchw", groups = 2 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
    return %c, %d : tensor<1x6x3x3xbf16>, tensor<1x6x3x3xf32>
  }
}
