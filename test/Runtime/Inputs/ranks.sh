#!/usr/bin/env bash
# The property test of runs over several ranks: every program (the random
# join-agg DAGs of seeds FIRST..LAST, random_dag.py, and the given .mlir
# files) is compiled for several nodes (nodes=2,gpus=2, nodes=4,gpus=1,
# nodes=3,gpus=2; the search's plan and random plans), run in one process
# and as one process per node under mpirun with --check --debug, and the
# two runs' outputs compared byte for byte. Prints one line per failure,
# how many bundles move data between nodes, and a closing
# "N passed, N failed" line; exits non-zero on any failure.
#
# usage: ranks.sh BUILD_DIR FIRST LAST WORK_DIR MPIRUN [PROGRAM.mlir...]
#   MPIRUN: the launcher's command, e.g. "mpirun --allow-run-as-root"
set -uo pipefail
build=$1 first=$2 last=$3 work=$4 mpirun=$5
shift 5
here=$(cd "$(dirname "$0")/../../Pipelines/Inputs" && pwd)
python=${PYTHON:-python3}
configs=("2 2 optimal" "4 1 random" "3 2 optimal" "3 2 random")
passed=0 failed=0 crossing=0
mkdir -p "$work"
# How many transfer steps of a bundle cross nodes.
count_crossing='
import json, sys
m = json.load(open(sys.argv[1]))
per_node = m["devices"] // m.get("nodes", 1)
device = {b["name"]: b["device"] for b in m["buffers"]}
def crosses(r):
    return device[r["from"]] // per_node != device[r["to"]] // per_node
print(sum(1 for s in m["steps"] if s["kind"] == "transfer"
          and any(crosses(r) for r in s.get("regions", [s]))))'

programs=("$@")
for seed in $(seq "$first" "$last"); do
  "$python" "$here/random_dag.py" "$seed" > "$work/dag$seed.mlir"
  programs+=("$work/dag$seed.mlir")
done
seed=0
for program in "${programs[@]}"; do
  seed=$((seed + 1))
  name=$(basename "$program" .mlir)
  for config in "${configs[@]}"; do
    read -r nodes gpus strategy <<< "$config"
    bundle=$work/$name-$nodes-$gpus-$strategy
    rm -rf "$bundle" "$bundle".*.npy
    if ! "$build/bin/ein-compile" "$program" -o "$bundle" \
         --topology="nodes=$nodes,gpus=$gpus" --allow-inexact \
         --strategy="$strategy" --seed="$seed" > "$bundle.log" 2>&1; then
      echo "FAIL $name ($config): ein-compile: $(grep -m1 error "$bundle.log")"
      failed=$((failed + 1))
      continue
    fi
    if [ "$("$python" -c "$count_crossing" "$bundle/manifest.json")" -gt 0 ]; then
      crossing=$((crossing + 1))
    fi
    results=$("$python" -c "import json, sys; print(len(json.load(open(sys.argv[1]))['results']))" "$bundle/program.json")
    one="" many=""
    for ((i = 0; i < results; i++)); do
      one+="${one:+,}$bundle.one$i.npy"
      many+="${many:+,}$bundle.many$i.npy"
    done
    if ! "$build/bin/ein-run" "$bundle" --seed="$seed" --outputs="$one" \
         >> "$bundle.log" 2>&1; then
      echo "FAIL $name ($config): ein-run: $(tail -n 1 "$bundle.log")"
      failed=$((failed + 1))
      continue
    fi
    rc=0
    timeout 120 $mpirun -n "$nodes" "$build/bin/ein-run" "$bundle" \
      --seed="$seed" --check --debug --outputs="$many" \
      >> "$bundle.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
      # The exit status (124: the timeout) and the first error, else the
      # log's last line: what a rare failure needs to be understood.
      why=$(grep -m1 error "$bundle.log" || tail -n 1 "$bundle.log")
      echo "FAIL $name ($config): mpirun -n $nodes ein-run: exit $rc: $why"
      failed=$((failed + 1))
      continue
    fi
    if ! grep -q "^ranks=$nodes nodes=$nodes " "$bundle.log"; then
      echo "FAIL $name ($config): no 'ranks=$nodes' line"
      failed=$((failed + 1))
      continue
    fi
    same=1
    for ((i = 0; i < results; i++)); do
      cmp -s "$bundle.one$i.npy" "$bundle.many$i.npy" || same=0
    done
    if [ "$same" -ne 1 ]; then
      echo "FAIL $name ($config): the ranks' outputs differ from one process's"
      failed=$((failed + 1))
      continue
    fi
    passed=$((passed + 1))
    rm -rf "$bundle" "$bundle".*.npy "$bundle.log"
  done
done
echo "$crossing of $((passed + failed)) bundles move data between nodes"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
