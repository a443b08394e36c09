#!/usr/bin/env bash
# Two compilations of the front end's model bundles (bench/models_gpu.py's
# DIR/NAME/bundle) on one GPU, in one run: each model's A and B bundle timed
# alternately ROUNDS times by `ein-run --bench` (inputs and weights drawn
# from the seed; the step's time does not depend on them), the best median
# of each side kept; then B's answers measured against the module itself
# (`models_gpu.py run B`). Logs under $OUT; a table last, with B's speed-up
# over A and its geometric mean.
#
# usage: bench/run_models_ab.sh EIN_RUN A B NAME[,NAME...]
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
run=$1 a=$2 b=$3 names=$4
out=${OUT:-models-ab}
rounds=${ROUNDS:-3}
mkdir -p "$out"
export CUDA_VISIBLE_DEVICES=0
median() { grep -o 'median_ms=[0-9.]*' "$1" 2>/dev/null | cut -d= -f2; }
declare -A best
for round in $(seq "$rounds"); do
  for name in ${names//,/ }; do
    for side in a b; do
      dir=${!side}/$name/bundle
      log=$out/$name-$side-$round.log
      "$run" "$dir" --bench --warmup=20 --iters=100 >"$log" 2>&1
      ms=$(median "$log")
      key=$name-$side
      if [ -n "$ms" ] && { [ -z "${best[$key]:-}" ] ||
        python3 -c "import sys; sys.exit(not $ms < ${best[$key]})"; }; then
        best[$key]=$ms
      fi
    done
  done
done
python3 "$here/models_gpu.py" run "$b" "$names" >"$out/run.log" 2>&1
echo "correctness of B against the module (models_gpu.py run):"
sed -n '/^model/,$p' "$out/run.log"
echo
echo "| model | A ms | B ms | B vs A |"
echo "|---|---|---|---|"
python3 - "$names" <<PY
import math, sys
best = {$(for k in "${!best[@]}"; do printf '"%s": %s, ' "$k" "${best[$k]}"; done)}
ratios = []
for name in sys.argv[1].split(","):
    a, b = best.get(name + "-a"), best.get(name + "-b")
    if a is None or b is None:
        print("| %s | %s | %s | failed |" % (name, a, b))
        continue
    ratios.append(a / b)
    print("| %s | %.4f | %.4f | %.3fx |" % (name, a, b, a / b))
if ratios:
    print("geomean B vs A: %.3fx" % math.exp(sum(map(math.log, ratios))
                                          / len(ratios)))
PY
