#!/usr/bin/env bash
# Transfers on their own stream (EIN_CUDA_STREAMS=2) and through the copy
# engine (EIN_CUDA_COPY=engine) against the defaults, on the GPU machine:
# each bundle timed with ein-run --bench under each setting, in one run.
# Logs go to $OUT; the table is printed last.
#
# usage: bench/run_overlap.sh EIN_RUN BUNDLE [BUNDLE ...]
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
run=$1; shift
out=${OUT:-overlap}
mkdir -p "$out"
settings="1:auto 2:auto 2:engine"
printf '%-26s' bundle | tee "$out/table.txt"
for s in $settings; do printf ' %14s' "streams=${s%%:*},${s#*:}"; done | tee -a "$out/table.txt"
echo | tee -a "$out/table.txt"
for bundle in "$@"; do
  name=$(basename "$bundle")
  printf '%-26s' "$name" | tee -a "$out/table.txt"
  for s in $settings; do
    log="$out/$name-${s%%:*}-${s#*:}.log"
    EIN_CUDA_STREAMS=${s%%:*} EIN_CUDA_COPY=${s#*:} timeout 60 "$run" "$bundle" --bench --warmup=2 --iters=10 > "$log" 2>&1
    ms=$(grep -o 'median_ms=[0-9.]*' "$log" | cut -d= -f2)
    printf ' %14s' "${ms:-fail}" | tee -a "$out/table.txt"
  done
  echo | tee -a "$out/table.txt"
done
echo "(ms, median of 10 after 2 warm-ups, CUDA events)" | tee -a "$out/table.txt"
