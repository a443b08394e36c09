#!/usr/bin/env bash
# Runs every CUDA bundle under the given directories with ein-run --check
# --debug on the GPU machine (the compiled bundles of ein-compile
# --target=cuda and the hand-written ones) and prints a table: bundle,
# devices, result, max_rel_err. Logs go to $OUT (or ./cuda-check).
#
# usage: bench/check_cuda_bundles.sh EIN_RUN DIR [DIR ...]
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
run=$1; shift
out=${OUT:-cuda-check}
mkdir -p "$out"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
passed=0 failed=0 skipped=0
rows=()
for dir in "$@"; do
  for bundle in "$dir"/*/; do
    bundle=${bundle%/}
    [ -f "$bundle/manifest.json" ] || continue
    grep -q '"target": "cuda"' "$bundle/manifest.json" || continue
    name=$(basename "$bundle")
    devices=$(grep -o '"devices": [0-9]*' "$bundle/manifest.json" | grep -o '[0-9]*$')
    if [ "$devices" -gt "$gpus" ]; then
      rows+=("$name $devices skipped(needs-$devices-GPUs) -")
      skipped=$((skipped + 1))
      continue
    fi
    if "$run" "$bundle" --check --debug --seed=7 > "$out/$name.log" 2>&1; then
      result=ok; passed=$((passed + 1))
    else
      result=FAIL; failed=$((failed + 1))
    fi
    err=$(grep -o 'max_rel_err=[^ ]*' "$out/$name.log" | tail -1 | cut -d= -f2)
    rows+=("$name $devices $result ${err:--}")
  done
done
printf '%-28s %7s %-22s %s\n' bundle devices result max_rel_err | tee "$out/table.txt"
for row in "${rows[@]}"; do
  printf '%-28s %7s %-22s %s\n' $row | tee -a "$out/table.txt"
done
echo "$passed passed, $failed failed, $skipped skipped" | tee -a "$out/table.txt"
[ "$failed" -eq 0 ]
