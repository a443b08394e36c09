#!/usr/bin/env bash
# What batched transfers save on the GPU machine (issue 8):
#  1. bench/cuda_runtime.py --sections batch: K regions from GPU 1 to GPU 0
#     as K transfer steps against one batched step (on a one-GPU machine,
#     within GPU 0);
#  2. with two GPUs, the random plans of the d64 block under gpu-large/batch
#     (built by bench/build_bundles.sh), with and without batching: each
#     --checked, then timed with ein-run --bench, in the same run.
# Logs and tables go to $OUT (or ./batching).
#
# usage: bench/run_batching.sh EIN_RUN BUNDLES_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=$1
dir=$2
out=${OUT:-batching}
mkdir -p "$out"
source "$here/nvidia_libs.sh"
gpus=$(nvidia-smi -L | wc -l)
python3 "$here/cuda_runtime.py" --ein-run "$run" --sections batch \
  --batch-gpus "$([ "$gpus" -ge 2 ] && echo 2 || echo 1)" \
  --out "$out/batch-micro.md" --log "$out/batch-micro.log"
if [ "$gpus" -lt 2 ]; then
  echo "(one GPU: the 2-GPU plans are not run)" > "$out/batch-plans.md"
  cat "$out/batch-micro.md" "$out/batch-plans.md"
  exit 0
fi
median() { grep -o 'median_ms=[0-9.]*' | cut -d= -f2; }
{
  echo "## Random plans of the d64 block on 2 GPUs ($(date -u +%F))"
  echo
  echo "| plan | batched steps | batched ms | unbatched ms | unbatched / batched |"
  echo "|---|---|---|---|---|"
} > "$out/batch-plans.md"
for b in "$dir"/*-unbatched; do
  name=$(basename "${b%-unbatched}")
  with=${b%-unbatched}
  for x in "$with" "$b"; do
    "$run" "$x" --check --debug --seed=7 > "$out/$(basename "$x").check" 2>&1 ||
      { echo "check failed: $x"; cat "$out/$(basename "$x").check"; exit 1; }
  done
  # Alternate the two, three times each, and keep each one's best median.
  best_with=1e9 best_without=1e9
  for i in 1 2 3; do
    t=$("$run" "$with" --bench --warmup=20 --iters=200 | tee -a "$out/$name.bench" | median)
    best_with=$(python3 -c "print(min($best_with, $t))")
    t=$("$run" "$b" --bench --warmup=20 --iters=200 | tee -a "$out/$name-unbatched.bench" | median)
    best_without=$(python3 -c "print(min($best_without, $t))")
  done
  steps=$(grep -o '"regions"' "$with/manifest.json" | wc -l)
  python3 -c "print('| $name | $steps | %.4f | %.4f | %.3f |' % ($best_with, $best_without, $best_without / $best_with))" >> "$out/batch-plans.md"
done
cat "$out/batch-micro.md" "$out/batch-plans.md"
