#!/usr/bin/env bash
# Issue 31's gemm question on one GPU, in one run: for each LLaMA workload's
# 1-GPU bundle (built by the caller under BUNDLES/W-1), the step timed with
# EIN_GEMM_TUNE=off (cuBLASLt's first heuristic choice) and on (its top 8
# candidates timed at load, the fastest kept); each gemm step's time from a
# profiled run (ein-run --profile=FILE.json) against torch.matmul on the same
# shapes (bench/gemm_vs_torch.py); and the PyTorch peers, eager
# (torch_llama_block.py) and compiled (torch_compile_block.py), in the same
# run. Logs under $OUT; a table last.
#
# usage: bench/run_gemm_tune.sh EIN_RUN BUNDLES [WORKLOAD ...]
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
run=$1 bundles=$2; shift 2
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(w1-l3-8b-b1-s8k w2-l3-8b-b8-s2k
  w3-l2-7b-b4-s4k w4-l3-70b-b1-s4k w5-l3-8b-b32-s512)
out=${OUT:-gemm-tune}
mkdir -p "$out"
export CUDA_VISIBLE_DEVICES=0
ein_ms() { grep -o 'median_ms=[0-9.]*' "$1" 2>/dev/null | cut -d= -f2; }
for w in "${workloads[@]}"; do
  for tune in off on; do
    EIN_GEMM_TUNE=$tune timeout 300 "$run" "$bundles/$w-1" --bench --warmup=2 --iters=10 > "$out/$w-$tune.log" 2>&1
    EIN_GEMM_TUNE=$tune timeout 300 "$run" "$bundles/$w-1" --profile="$out/$w-$tune.json" > "$out/$w-$tune.profile.log" 2>&1
  done
  timeout 300 python3 "$here/gemm_vs_torch.py" "$bundles/$w-1" "$out/$w-off.json" "$out/$w-on.json" > "$out/$w-gemm.txt" 2>&1
done
list=$(IFS=,; echo "${workloads[*]}")
timeout 300 python3 "$here/peers/torch_llama_block.py" --strategy single --workloads "$list" > "$out/torch-single.txt" 2> "$out/torch-single.err"
timeout 420 python3 "$here/peers/torch_compile_block.py" --strategy single --workloads "$list" > "$out/compile-single.txt" 2> "$out/compile-single.err"
peer_ms() { awk -v w="$1" '$1 == w && $4 ~ /^[0-9.]+$/ {print $4}' "$2" 2>/dev/null | head -1; }
ratio() { [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}' || echo -; }
for w in "${workloads[@]}"; do
  echo "== $w: per gemm problem (ein off, ein on, torch.matmul)"; cat "$out/$w-gemm.txt"
done
printf '%-18s %9s %9s %9s %9s %9s %9s\n' workload ein_off ein_on eager compiled on/best off/best | tee "$out/table.txt"
for w in "${workloads[@]}"; do
  off=$(ein_ms "$out/$w-off.log"); on=$(ein_ms "$out/$w-on.log")
  eager=$(peer_ms "$w" "$out/torch-single.txt"); comp=$(peer_ms "$w" "$out/compile-single.txt")
  best=$(printf '%s\n' $eager $comp | grep -E '^[0-9.]+$' | sort -g | head -1)
  printf '%-18s %9s %9s %9s %9s %9s %9s\n' "$w" "${off:-fail}" "${on:-fail}" "${eager:--}" "${comp:--}" \
    "$(ratio "$on" "$best")" "$(ratio "$off" "$best")" | tee -a "$out/table.txt"
done
echo "(ms, median of 10 after 2 warm-ups, one H200; ratio = ein / best PyTorch, below 1 ein is faster)" | tee -a "$out/table.txt"
