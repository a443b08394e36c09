#!/usr/bin/env bash
# Matrix chains A-E (WORKLOADS.md), ein's bundles (bench/build_bundles.sh:
# BUNDLES/C on 2 GPUs, BUNDLES/C-1gpu) timed with ein-run --bench both ways
# (the GPUs' clock, and --timer=host: the host's clock around a blocking
# launch, as the JAX peer times), next to the JAX peer in the same run.
# Logs go to $OUT; the table is printed last.
#
# usage: bench/run_chains.sh EIN_RUN BUNDLES
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
run=$1 bundles=$2
out=${OUT:-chains}
mkdir -p "$out"
chains="A-square-chain B-skinny-chain C-bushy D-batched E-big-matmul"
timeout 480 python3 "$here/peers/jax_matrix_chain.py" > "$out/jax.txt" 2> "$out/jax.err"
echo "jax rc=$?" >> "$out/jax.err"
ms() { grep -o 'median_ms=[0-9.]*' "$1" 2>/dev/null | cut -d= -f2; }
jax() { awk -v c="$1" -v n="$2" '$1 == c && $2 == n {print $3}' "$out/jax.txt"; }
ratio() { [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", b / a}' || echo -; }
printf '%-16s %8s %8s %8s %8s %8s %8s %8s %8s\n' chain ein1_dev ein1_host jax_1 ein2_dev ein2_host jax_2 ratio_1 ratio_2 | tee "$out/table.txt"
for c in $chains; do
  declare -A t=()
  for b in "$c-1gpu:1" "$c:2"; do
    for timer in device host; do
      log="$out/${b%%:*}-$timer.log"
      visible=0,1; [ "${b##*:}" = 1 ] && visible=0
      CUDA_VISIBLE_DEVICES=$visible timeout 120 "$run" "$bundles/${b%%:*}" --bench --warmup=2 --iters=10 --timer=$timer > "$log" 2>&1
      t[${b##*:}$timer]=$(ms "$log")
    done
  done
  j1=$(jax "$c" 1) j2=$(jax "$c" 2)
  printf '%-16s %8s %8s %8s %8s %8s %8s %8s %8s\n' "$c" "${t[1device]:--}" "${t[1host]:--}" "${j1:--}" \
    "${t[2device]:--}" "${t[2host]:--}" "${j2:--}" "$(ratio "${t[1host]}" "$j1")" "$(ratio "${t[2host]}" "$j2")" | tee -a "$out/table.txt"
done
echo "(ms, median of 10 after 2 warm-ups; ratio = JAX / ein on the host's clock, which JAX uses: above 1 ein is faster)" | tee -a "$out/table.txt"
for c in $chains; do
  [ -f "$bundles/$c.json" ] &&
    echo "plan $c: $(python3 "$here/plan_phrase.py" chain "$bundles/$c.json")" | tee -a "$out/table.txt"
done
