#!/usr/bin/env bash
# Two builds of the same LLaMA bundles on one GPU, in one run, with the
# PyTorch peers: each workload's A/W-1 and B/W-1 (say before and after a
# compiler change, from bench/build_bundles.sh's llama/ directories or
# ein-compile --devices=1 --target=cuda) timed alternately ROUNDS times (the
# best median of each kept), then torch_llama_block.py (eager, CUDA graph)
# and torch_compile_block.py (Inductor, CUDA graph), single GPU. Logs under
# $OUT; a table last.
#
# usage: bench/run_ab.sh EIN_RUN A B [WORKLOAD ...]
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
run=$1 a=$2 b=$3; shift 3
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(w1-l3-8b-b1-s8k w2-l3-8b-b8-s2k
  w3-l2-7b-b4-s4k w4-l3-70b-b1-s4k w5-l3-8b-b32-s512)
out=${OUT:-ab}
rounds=${ROUNDS:-2}
mkdir -p "$out"
export CUDA_VISIBLE_DEVICES=0
ein_ms() { grep -o 'median_ms=[0-9.]*' "$1" 2>/dev/null | cut -d= -f2; }
best() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | head -1; }
declare -A A B
for w in "${workloads[@]}"; do
  as=() bs=()
  for r in $(seq "$rounds"); do
    timeout 300 "$run" "$a/$w-1" --bench --warmup=2 --iters=10 > "$out/$w-A$r.log" 2>&1
    as+=("$(ein_ms "$out/$w-A$r.log")")
    timeout 300 "$run" "$b/$w-1" --bench --warmup=2 --iters=10 > "$out/$w-B$r.log" 2>&1
    bs+=("$(ein_ms "$out/$w-B$r.log")")
  done
  A[$w]=$(best "${as[@]}"); B[$w]=$(best "${bs[@]}")
done
list=$(IFS=,; echo "${workloads[*]}")
timeout 300 python3 "$here/peers/torch_llama_block.py" --strategy single --workloads "$list" > "$out/torch-single.txt" 2> "$out/torch-single.err"
timeout 420 python3 "$here/peers/torch_compile_block.py" --strategy single --workloads "$list" > "$out/compile-single.txt" 2> "$out/compile-single.err"
peer_ms() { awk -v w="$1" '$1 == w && $4 ~ /^[0-9.]+$/ {print $4}' "$2" 2>/dev/null | head -1; }
ratio() { [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]] && awk -v x="$1" -v y="$2" 'BEGIN {printf "%.3f", x / y}' || echo -; }
printf '%-18s %9s %9s %9s %9s %9s %9s\n' workload A B eager compiled A/best B/best | tee "$out/table.txt"
for w in "${workloads[@]}"; do
  eager=$(peer_ms "$w" "$out/torch-single.txt"); comp=$(peer_ms "$w" "$out/compile-single.txt")
  top=$(best "$eager" "$comp")
  printf '%-18s %9s %9s %9s %9s %9s %9s\n' "$w" "${A[$w]:-fail}" "${B[$w]:-fail}" "${eager:--}" "${comp:--}" \
    "$(ratio "${A[$w]}" "$top")" "$(ratio "${B[$w]}" "$top")" | tee -a "$out/table.txt"
done
echo "(ms: ein the best of $rounds medians of 10 after 2 warm-ups, A and B alternating; PyTorch one median of 10; one GPU; ratio = ein / best PyTorch, below 1 ein is faster)" | tee -a "$out/table.txt"
