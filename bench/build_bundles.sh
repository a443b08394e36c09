#!/usr/bin/env bash
# Builds, on the build machine, every CUDA bundle the GPU benchmarks run
# (bench/run_llama_blocks.sh, run_chains.sh, run_ablation.sh,
# check_cuda_bundles.sh), under OUT_DIR (default gpu-large/, which git
# ignores):
#   llama/W-1, W-2   each LLaMA workload on 1 GPU and on 2 (--tie-layout);
#                    the 2-GPU plans' --explain JSON as W-2.json, W-2w.json;
#   llama/W-2w       2 GPUs, weights not replicated (--strategy=megatron:
#                    each GPU holds half of every weight);
#   check/           small blocks and chains for ein-run --check --debug
#                    against the float64 evaluator, on the same paths,
#                    and grouped and depthwise bf16 convolutions (cuDNN);
#   imports/         the import issue's linalg test programs
#                    (test/Pipelines/Inputs/linalg_*.mlir) through ein-import
#                    and ein-fuse-composites, on 1 and 2 GPUs, and a bf16
#                    causal GQA attention written in linalg (head dim 64:
#                    the fused attention step), for --check; the same
#                    programs in bf16 (bf16-*: ragged cuBLASLt gemms);
#   kernels/         bench/gen_kernel_bench.py's programs, each with its
#                    source (bench/run_kernel_bench.sh);
#   chains/C, C-1gpu each matrix chain on 2 GPUs (plan in C.json) and on 1;
#   batch/           random plans of the d64 block with and without
#                    batched transfers (bench/run_batching.sh);
#   ablation/        w1 on 2 GPUs (w2 was measured before): the search's plan, naive exchanges
#                    and ten random plans, each with its --explain JSON.
#
# usage: bench/build_bundles.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
compile=${EIN_COMPILE:-$root/build/bin/ein-compile}
out=${1:-$root/gpu-large}
src=$out/src
mkdir -p "$out"/{llama,check,chains,ablation,imports,kernels} "$src"
quiet() { "$@" > /dev/null; }

block() { python3 "$root/examples/gen_llama_block.py" "$@"; }
workloads="w1-l3-8b-b1-s8k w2-l3-8b-b8-s2k w3-l2-7b-b4-s4k w4-l3-70b-b1-s4k w5-l3-8b-b32-s512 long-l3-8b-s128k"
for w in $workloads; do
  block --workload "$w" --dtype bf16 > "$src/$w.mlir"
  quiet "$compile" "$src/$w.mlir" -o "$out/llama/$w-1" --devices=1 --target=cuda
  quiet "$compile" "$src/$w.mlir" -o "$out/llama/$w-2" --devices=2 --target=cuda --tie-layout --explain="$out/llama/$w-2.json"
  quiet "$compile" "$src/$w.mlir" -o "$out/llama/$w-2w" --devices=2 --target=cuda --tie-layout --strategy=megatron --explain="$out/llama/$w-2w.json"
done

# Small copies of the same paths: fused attention at head dim 64 (bf16) and
# 128 (f16), token/head cuts, megatron's aggregations, and the chains / 32.
block --hidden 512 --heads 8 --kv-heads 2 --ffn 1024 --batch 2 --seq 200 --dtype bf16 > "$src/d64.mlir"
block --hidden 1024 --heads 8 --kv-heads 2 --ffn 2048 --batch 1 --seq 384 --dtype f16 > "$src/d128.mlir"
for b in d64 d128; do
  quiet "$compile" "$src/$b.mlir" -o "$out/check/llama-$b-1" --devices=1 --target=cuda
  quiet "$compile" "$src/$b.mlir" -o "$out/check/llama-$b-2" --devices=2 --target=cuda --tie-layout
  quiet "$compile" "$src/$b.mlir" -o "$out/check/llama-$b-2w" --devices=2 --target=cuda --tie-layout --strategy=megatron
done
chains="A-square-chain B-skinny-chain C-bushy D-batched E-big-matmul"
for c in $chains; do
  python3 "$here/gen_matrix_chain.py" "$c" > "$src/$c.mlir"
  python3 "$here/gen_matrix_chain.py" "$c" --scale 32 > "$src/$c-small.mlir"
  quiet "$compile" "$src/$c.mlir" -o "$out/chains/$c" --devices=2 --target=cuda --explain="$out/chains/$c.json"
  quiet "$compile" "$src/$c.mlir" -o "$out/chains/$c-1gpu" --devices=1 --target=cuda
  quiet "$compile" "$src/$c-small.mlir" -o "$out/check/$c-small" --devices=2 --target=cuda
done

# Imported programs: as the tests write them (f32), and GQA attention in
# bf16 at a head dimension the fused attention step takes.
inputs=$root/test/Pipelines/Inputs
sed -e 's/0xFF800000 : f32/0xFF80 : bf16/; s/f32/bf16/g; s/8x7x8x/8x256x64x/g' \
    -e 's/8x7x8/8x256x64/g; s/2x7x8/2x256x64/g; s/8x7x7/8x256x256/g; s/8x7/8x256/g' \
    -e 's/0.353553385/0.125/' "$inputs/linalg_gqa_attention.mlir" > "$src/linalg_gqa_attention_bf16.mlir"
for f in "$inputs"/linalg_*.mlir "$src/linalg_gqa_attention_bf16.mlir"; do
  p=$(basename "$f" .mlir); p=${p#linalg_}
  quiet "$compile" "$f" -o "$out/imports/$p-1" --devices=1 --target=cuda
  quiet "$compile" "$f" -o "$out/imports/$p-2" --devices=2 --target=cuda
done

# The same programs in bf16: their matmuls are cuBLASLt gemms with ragged
# dimensions (97 x 131, ...), for check_cuda_bundles.sh under
# EIN_GEMM_PAD=always (the padded copies) as well as the default.
for f in "$inputs"/linalg_*.mlir; do
  p=$(basename "$f" .mlir); p=bf16-${p#linalg_}
  sed -e 's/0xFF800000 : f32/0xFF80 : bf16/; s/f32/bf16/g' "$f" > "$src/$p.mlir"
  quiet "$compile" "$src/$p.mlir" -o "$out/imports/$p-1" --devices=1 --target=cuda
  quiet "$compile" "$src/$p.mlir" -o "$out/imports/$p-2" --devices=2 --target=cuda
done

# The kernel-speed benchmark (bench/run_kernel_bench.sh): one bundle per
# program of gen_kernel_bench.py, with its source beside it; and a ragged
# bf16 gemm small enough to --check.
python3 "$here/gen_kernel_bench.py" "$src/kernels"
for f in "$src"/kernels/*.mlir; do
  k=$(basename "$f" .mlir)
  quiet "$compile" "$f" -o "$out/kernels/$k" --devices=1 --target=cuda
  cp "$f" "$out/kernels/$k/"
done
python3 - "$here" > "$src/ragged-gemm.mlir" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from gen_kernel_bench import gemm
print(gemm("ragged_gemm", 1000, 1001, 999))
PY
quiet "$compile" "$src/ragged-gemm.mlir" -o "$out/check/ragged-gemm-1" --devices=1 --target=cuda
quiet "$compile" "$src/ragged-gemm.mlir" -o "$out/check/ragged-gemm-2" --devices=2 --target=cuda

# Grouped and depthwise bf16 convolutions: cuDNN conv steps with their
# groups, cut by groups (and output channels) on 2 and 4 GPUs, one cut by
# input channels in generated kernels (f32 partial sums); and with
# --strategy=spatial, by rows and columns with halos.
sed 's/f32/bf16/g' "$root/test/Tools/Inputs/conv-grouped.mlir" > "$src/conv-grouped-bf16.mlir"
for d in 1 2 4; do
  quiet "$compile" "$src/conv-grouped-bf16.mlir" -o "$out/check/conv-grouped-bf16-$d" --devices=$d --target=cuda --weights=1,3,5
done
quiet "$compile" "$src/conv-grouped-bf16.mlir" -o "$out/check/conv-grouped-bf16-spatial-4" --devices=4 --target=cuda --weights=1,3,5 --strategy=spatial

# Batched transfers on 2 GPUs: the search's plans batch nothing there (one
# block per op and direction), random plans of the small d64 block do.
# Each with and without batching (bench/run_batching.sh), both --checked.
mkdir -p "$out/batch"
for s in 2 3 6 10 11; do
  quiet "$compile" "$src/d64.mlir" -o "$out/batch/d64-random$s" --devices=2 --target=cuda --strategy=random --seed="$s"
  quiet "$compile" "$src/d64.mlir" -o "$out/batch/d64-random$s-unbatched" --devices=2 --target=cuda --strategy=random --seed="$s" --batch-transfers=false
done

for w in w1-l3-8b-b1-s8k; do
  plan() { quiet "$compile" "$src/$w.mlir" -o "$out/ablation/$w-$1" --devices=2 --target=cuda --tie-layout --explain="$out/ablation/$w-$1.json" "${@:2}"; }
  plan optimal
  plan naive --exchange=naive
  for s in $(seq 1 10); do plan "random$s" --strategy=random --seed="$s"; done
done
rm -rf "$src"
du -sh "$out"
