#!/usr/bin/env bash
# NaN and infinity through each bundle under DIR on the GPU machine: inputs
# with a NaN, +inf and -inf (bench/special_values.py make), the bundle run
# by ein-run and the program by ein-eval (float64), compared NaN for NaN
# and infinity for infinity (special_values.py compare). A table last;
# logs under $OUT (or ./special-values).
#
# usage: bench/check_special_values.sh EIN_RUN EIN_EVAL DIR
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
here=$(cd "$(dirname "$0")" && pwd)
run=$1 eval=$2 dir=$3
out=${OUT:-special-values}
mkdir -p "$out"
rows=()
failed=0
for bundle in "$dir"/*/; do
  bundle=${bundle%/}
  [ -f "$bundle/manifest.json" ] || continue
  name=$(basename "$bundle")
  inputs=$(${PYTHON:-python3} "$here/special_values.py" make "$bundle" "$out/$name" | paste -sd,)
  if "$run" "$bundle" --inputs="$inputs" --outputs="$out/$name/got.npy" > "$out/$name.run.log" 2>&1 &&
     "$eval" "$bundle/program.json" --inputs="$inputs" --outputs="$out/$name/want.npy" > "$out/$name.eval.log" 2>&1; then
    line=$(${PYTHON:-python3} "$here/special_values.py" compare "$out/$name/got.npy" "$out/$name/want.npy") || failed=$((failed + 1))
  else
    line="did not run (logs: $name.run.log, $name.eval.log)"; failed=$((failed + 1))
  fi
  rows+=("$name | $line")
done
printf '%s\n' "${rows[@]}" | tee "$out/table.txt"
echo "special values: ${#rows[@]} bundles, $failed failed"
[ "$failed" -eq 0 ]
