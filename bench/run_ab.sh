#!/usr/bin/env bash
# Two builds of the same LLaMA bundles on one GPU, in one run, with the
# PyTorch peers: each workload's A/W-1 and B/W-1 (say before and after a
# compiler change, from bench/build_bundles.sh's llama/ directories or
# ein-compile --devices=1 --target=cuda) timed alternately ROUNDS times, each
# round followed by torch_llama_block.py (eager, CUDA graph) and
# torch_compile_block.py (Inductor, CUDA graph) on every workload (PEER_ROUNDS
# of them, default ROUNDS); the best median of each side kept, single GPU.
# Logs under $OUT; a table last, with the ratios' geometric means. WARMUP and
# ITERS (default 2 and 10) set every side's warm-up steps and timed steps:
# short runs read the GPU's boost clock after the idle start, long ones
# (WARMUP=30 ITERS=100) its sustained clock.
#
# A_ENV and B_ENV (say "EIN_GEMM_TUNE=hot") set environment variables for
# one side's ein-run only, so A and B may also be the same bundles.
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
warmup=${WARMUP:-2} iters=${ITERS:-10}
mkdir -p "$out"
export CUDA_VISIBLE_DEVICES=0
ein_ms() { grep -o 'median_ms=[0-9.]*' "$1" 2>/dev/null | cut -d= -f2; }
best() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | head -1; }
declare -A A B
list=$(IFS=,; echo "${workloads[*]}")
# Each round times every workload's A and B, then the PyTorch peers (eager,
# then compiled) on all of them, so that each side's best median comes from
# as many rounds of the same machine (PEER_ROUNDS=1 times the peers once).
peer_rounds=${PEER_ROUNDS:-$rounds}
declare -A as bs
for r in $(seq "$rounds"); do
  for w in "${workloads[@]}"; do
    env ${A_ENV:-} timeout 300 "$run" "$a/$w-1" --bench --warmup="$warmup" --iters="$iters" > "$out/$w-A$r.log" 2>&1
    as[$w]+=" $(ein_ms "$out/$w-A$r.log")"
    env ${B_ENV:-} timeout 300 "$run" "$b/$w-1" --bench --warmup="$warmup" --iters="$iters" > "$out/$w-B$r.log" 2>&1
    bs[$w]+=" $(ein_ms "$out/$w-B$r.log")"
  done
  if [ "$r" -le "$peer_rounds" ]; then
    timeout 300 python3 "$here/peers/torch_llama_block.py" --strategy single --workloads "$list" --warmup "$warmup" --iters "$iters" > "$out/torch-single-$r.txt" 2> "$out/torch-single-$r.err"
    timeout 420 python3 "$here/peers/torch_compile_block.py" --strategy single --workloads "$list" --warmup "$warmup" --iters "$iters" > "$out/compile-single-$r.txt" 2> "$out/compile-single-$r.err"
  fi
done
for w in "${workloads[@]}"; do
  A[$w]=$(best ${as[$w]}); B[$w]=$(best ${bs[$w]})
done
peer_ms() { awk -v w="$1" '$1 == w && $4 ~ /^[0-9.]+$/ {print $4}' "$2" 2>/dev/null | head -1; }
ratio() { [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]] && awk -v x="$1" -v y="$2" 'BEGIN {printf "%.3f", x / y}' || echo -; }
printf '%-18s %9s %9s %9s %9s %9s %9s\n' workload A B eager compiled A/best B/best | tee "$out/table.txt"
for w in "${workloads[@]}"; do
  eagers=() comps=()
  for r in $(seq "$peer_rounds"); do
    eagers+=("$(peer_ms "$w" "$out/torch-single-$r.txt")"); comps+=("$(peer_ms "$w" "$out/compile-single-$r.txt")")
  done
  eager=$(best "${eagers[@]}"); comp=$(best "${comps[@]}")
  top=$(best "$eager" "$comp")
  printf '%-18s %9s %9s %9s %9s %9s %9s\n' "$w" "${A[$w]:-fail}" "${B[$w]:-fail}" "${eager:--}" "${comp:--}" \
    "$(ratio "${A[$w]}" "$top")" "$(ratio "${B[$w]}" "$top")" | tee -a "$out/table.txt"
done
echo "(ms: ein the best of $rounds medians of $iters after $warmup warm-ups, A and B alternating; PyTorch the best of $peer_rounds medians of $iters, its rounds after ein's; one GPU; ratio = ein / best PyTorch, below 1 ein is faster)" | tee -a "$out/table.txt"
# The geometric mean of each ratio column.
awk 'NR > 1 && $6 ~ /^[0-9.]+$/ && $7 ~ /^[0-9.]+$/ {la += log($6); lb += log($7); n++}
     END {if (n) printf "geomean A/best %.3f B/best %.3f over %d workloads\n", exp(la / n), exp(lb / n), n}' "$out/table.txt" | tee -a "$out/table.txt"
