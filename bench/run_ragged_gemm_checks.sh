#!/usr/bin/env bash
# One GPU-machine run for the ragged-gemm work of the CUDA code generation
# issue (bench/results/2026-11-30-ragged-gemm-h200.md): the runtime unit
# tests on the GPUs, the small check bundles with padding as the runtime
# decides and with EIN_GEMM_PAD=always (the llama-d128 ones are left out:
# their float64 reference takes minutes), and the kernel benchmark with
# padding never, auto, and auto with every copy on the copy kernel.
#
# usage: bench/run_ragged_gemm_checks.sh EIN_RUN BUNDLES   (BUNDLES: gpu-large)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/nvidia_libs.sh"
run=$1 bundles=$2
out=${OUT:-ragged-gemm}
mkdir -p "$out"
subset=$(mktemp -d)
for b in "$bundles"/imports/* "$bundles"/check/*; do
  case $(basename "$b") in llama-d128-*) continue ;; esac
  ln -s "$(cd "$b" && pwd)" "$subset/$(basename "$b")"
done
tests=$(dirname "$run")/ein-runtime-tests
if [ -x "$tests" ]; then
  "$tests" > "$out/runtime-unit.log" 2>&1
  echo "runtime-unit: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/runtime-unit.log" | tr '\n' ' ')"
fi
OUT=$out/check bash "$here/check_cuda_bundles.sh" "$run" "$subset" > /dev/null 2>&1
echo "check (EIN_GEMM_PAD=auto): $(tail -1 "$out/check/table.txt")"
EIN_GEMM_PAD=always OUT=$out/check-pad bash "$here/check_cuda_bundles.sh" "$run" "$subset" > /dev/null 2>&1
echo "check (EIN_GEMM_PAD=always): $(tail -1 "$out/check-pad/table.txt")"
for mode in never auto; do
  EIN_GEMM_PAD=$mode OUT=$out/kernels-$mode bash "$here/run_kernel_bench.sh" "$run" "$bundles/kernels" > /dev/null 2>&1
done
EIN_CUDA_COPY=kernel OUT=$out/kernels-auto-copy-kernel bash "$here/run_kernel_bench.sh" "$run" "$bundles/kernels" > /dev/null 2>&1
for t in never auto auto-copy-kernel; do
  echo "== kernels, EIN_GEMM_PAD ${t/-copy-kernel/ (EIN_CUDA_COPY=kernel)}"
  cat "$out/kernels-$t/table.txt"
done
rm -rf "$subset"
