#!/usr/bin/env bash
# The plan ablations of issue #14 on the GPU machine: every bundle under
# DIR (NAME-optimal, NAME-naive, NAME-randomS from ein-compile
# --strategy=random --seed=S; each with its --explain JSON as NAME-X.json)
# timed with ein-run --bench, then a table per workload: the optimal plan,
# the median of the random plans and their ratio, naive against
# synthesized exchanges, and the simulator's prediction against the
# measured time (Pearson r over every plan). Logs go to $OUT.
#
# usage: bench/run_ablation.sh EIN_RUN DIR
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
run=$1 dir=$2
out=${OUT:-ablation}
mkdir -p "$out"
: > "$out/times.txt"
for bundle in "$dir"/*/; do
  bundle=${bundle%/}
  name=$(basename "$bundle")
  timeout 60 "$run" "$bundle" --bench --warmup=2 --iters=10 > "$out/$name.log" 2>&1
  ms=$(grep -o 'median_ms=[0-9.]*' "$out/$name.log" | cut -d= -f2)
  echo "$name ${ms:-fail}" | tee -a "$out/times.txt"
done
python3 "$here/summarize_ablation.py" "$dir" "$out/times.txt" | tee "$out/table.txt"
