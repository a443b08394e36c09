#!/usr/bin/env bash
# The kernel-speed benchmark of the CUDA code generation issue, on one H200:
# the bundles of bench/gen_kernel_bench.py (compiled with ein-compile
# --target=cuda --devices=1 into BUNDLES/NAME/, each with its NAME.mlir) and
# the PyTorch peer timed in the same run, printed as a table: ms, GB/s (or
# TFLOP/s for the gemm) and the fraction of the measured 4.24 TB/s.
#
# usage: bench/run_kernel_bench.sh EIN_RUN BUNDLES
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
run=$1 bundles=$2
out=${OUT:-kernel-bench}
mkdir -p "$out"
python3 bench/torch_kernels.py > "$out/torch.txt" 2> "$out/torch.err"
printf '%-16s %10s %10s %12s %8s %10s %8s\n' kernel ein_ms torch_ms ein_rate of_peak torch_rate ratio | tee "$out/table.txt"
for dir in "$bundles"/*/; do
  name=$(basename "$dir")
  "$run" "$dir" --bench --warmup=2 --iters=10 > "$out/$name.log" 2>&1
  ms=$(grep -o 'median_ms=[0-9.]*' "$out/$name.log" | cut -d= -f2)
  peer=$(awk -v n="$name" '$1 == n {print $2}' "$out/torch.txt")
  work=$(head -1 "$dir/$name.mlir")
  if [[ $work == *flops=* ]]; then
    flops=${work#*flops=}; flops=${flops%% *}
    rate=$(awk -v f="$flops" -v t="$ms" 'BEGIN {printf "%.0f TF/s", f / t / 1e9}')
    peer_rate=$(awk -v f="$flops" -v t="$peer" 'BEGIN {printf "%.0f TF/s", f / t / 1e9}')
    peak=-
  else
    bytes=${work#*bytes=}; bytes=${bytes%% *}
    rate=$(awk -v b="$bytes" -v t="$ms" 'BEGIN {printf "%.0f GB/s", b / t / 1e6}')
    peer_rate=$(awk -v b="$bytes" -v t="$peer" 'BEGIN {printf "%.0f GB/s", b / t / 1e6}')
    peak=$(awk -v b="$bytes" -v t="$ms" 'BEGIN {printf "%.0f%%", 100 * b / t / 1e6 / 4240}')
  fi
  ratio=$(awk -v a="$ms" -v b="$peer" 'BEGIN {printf "%.2f", b / a}')
  printf '%-16s %10s %10s %12s %8s %10s %8s\n' "$name" "$ms" "$peer" "$rate" "$peak" "$peer_rate" "$ratio" | tee -a "$out/table.txt"
done
echo "(ratio: torch_ms / ein_ms; above 1 ein is faster. torch rms_norm_fused: $(awk '$1 == "rms_norm_fused" {print $2}' "$out/torch.txt") ms)" | tee -a "$out/table.txt"
