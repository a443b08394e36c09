#!/usr/bin/env bash
# Planning time on the build machine (issue #6): ein-plan (spec
# enumeration, the whole-graph search, the rewrite onto relations) of
# LLaMA blocks at w2's shape, 1 to 32 of them stacked
# (examples/gen_llama_block.py --blocks), for 2 to 64 devices. Each run has
# LIMIT seconds (default 60); once one times out, the larger stacks at that
# device count are skipped. A run whose search hit its state cap is marked
# "capped" (allow-inexact keeps the cheapest plan found).
#
# usage: bench/plan_time.sh BUILD_DIR [LIMIT]
set -uo pipefail
build=$1 limit=${2:-60}
here=$(dirname "$0")
work=$(mktemp -d)
blocks=(1 2 4 8 16 32)
printf '%-8s' devices
for b in "${blocks[@]}"; do printf ' %12s' "$b-block"; done
echo
for d in 2 4 8 16 32 64; do
  printf '%-8s' "$d"
  over=0
  for b in "${blocks[@]}"; do
    if [ $over = 1 ]; then printf ' %12s' "-"; continue; fi
    program=$work/b$b.mlir
    [ -f "$program" ] || python3 "$here/../examples/gen_llama_block.py" \
      --workload w2-l3-8b-b8-s2k --blocks "$b" > "$program"
    start=$(date +%s.%N)
    timeout "$limit" "$build/bin/ein-opt" "$program" \
      --ein-attach-target="devices=$d" \
      --ein-plan="allow-inexact=true" -o /dev/null 2> "$work/err"
    status=$?
    end=$(date +%s.%N)
    if [ $status = 124 ]; then
      printf ' %12s' ">${limit}s"; over=1
    elif [ $status != 0 ]; then
      printf ' %12s' "error"
    else
      cell=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2fs", b - a}')
      grep -q "kept only" "$work/err" && cell="$cell*"
      printf ' %12s' "$cell"
    fi
  done
  echo
done
echo "(* the search hit its state cap: the plan is the cheapest found, not provably optimal)"
rm -rf "$work"
