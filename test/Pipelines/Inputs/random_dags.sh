#!/usr/bin/env bash
# The property test over random join-agg DAGs: every program of seeds
# FIRST..LAST (random_dag.py) is compiled by ein-compile for 1, 2, 3, 4, 5
# and 8 devices with naive and synthesized exchanges, on NVSwitch and at 8 on
# the DGX-1 cube-mesh, and under random plans (--strategy=random, drawn
# from the program's seed) at 2, 4 and 8, and run with ein-run --check
# --debug against the reference evaluator. Prints one line per failure and
# a closing
# "N passed, N failed" line; exits non-zero on any failure.
#
# usage: random_dags.sh BUILD_DIR FIRST LAST [WORK_DIR]
set -uo pipefail
build=$1 first=$2 last=$3
work=${4:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
configs=("1 nvswitch naive" "1 nvswitch synthesized" "2 nvswitch naive"
         "2 nvswitch synthesized" "3 nvswitch naive" "3 nvswitch synthesized"
         "4 nvswitch naive" "4 nvswitch synthesized" "5 nvswitch naive"
         "5 nvswitch synthesized" "8 nvswitch naive" "8 nvswitch synthesized"
         "8 dgx1-v100 synthesized" "2 nvswitch synthesized random"
         "4 nvswitch naive random" "8 nvswitch synthesized random")
passed=0 failed=0
mkdir -p "$work"
for seed in $(seq "$first" "$last"); do
  program=$work/dag$seed.mlir
  "$python" "$here/random_dag.py" "$seed" > "$program"
  for config in "${configs[@]}"; do
    read -r devices topology exchange strategy <<< "$config"
    strategy=${strategy:-optimal}
    bundle=$work/dag$seed-$devices-$topology-$exchange-$strategy
    rm -rf "$bundle"
    if ! "$build/bin/ein-compile" "$program" -o "$bundle" --devices="$devices" \
         --topology="$topology" --exchange="$exchange" --allow-inexact \
         --strategy="$strategy" --seed="$seed" \
         > "$bundle.log" 2>&1; then
      echo "FAIL seed $seed ($config): ein-compile: $(grep -m1 error "$bundle.log")"
      failed=$((failed + 1))
      continue
    fi
    if ! "$build/bin/ein-run" "$bundle" --check --debug >> "$bundle.log" 2>&1; then
      echo "FAIL seed $seed ($config): ein-run: $(tail -n 1 "$bundle.log")"
      failed=$((failed + 1))
      continue
    fi
    passed=$((passed + 1))
    rm -rf "$bundle" "$bundle.log"
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
