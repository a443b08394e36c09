#!/usr/bin/env bash
# Compiles the same corpus of bundles with two ein-compile binaries and
# compares them byte for byte: a refactoring that must not change behaviour
# (issue 25's contract) leaves every manifest, program.json, explain JSON and
# kernel library as it was.
#   scripts/compare-bundles.sh OLD_EIN_COMPILE NEW_EIN_COMPILE [--bench]
#     [--same-order]
# The corpus: examples/ (cpu and cuda, 1, 2, 3 and 8 devices, with --explain),
# the LLaMA block under the planner's other options (stages, moving weights,
# partials, strategies, a memory limit) and, with --bench, every bundle of bench/build_bundles.sh (slow: the full
# LLaMA workloads). With --same-order, manifests may also differ in waits
# their steps' other waits imply (scripts/same_schedule.py: the same order
# of steps; what dropping implied waits changes). Keep a copy of the old
# binary before rebuilding:
#   cp build/bin/ein-compile /tmp/ein-compile.old; (rebuild)
#   scripts/compare-bundles.sh /tmp/ein-compile.old build/bin/ein-compile
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 OLD_EIN_COMPILE NEW_EIN_COMPILE [--bench] [--same-order]" >&2; exit 2; }
old=$1 new=$2 bench= order=
for option in "${@:3}"; do
  case $option in
    --bench) bench=--bench ;;
    --same-order) order=--same-order ;;
    *) echo "$0: unknown option $option" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

corpus() { # COMPILE OUT
  local compile=$1 out=$2
  mkdir -p "$out"
  for ex in llama_block matrix_chain mlp; do
    for target in cpu cuda; do
      for d in 1 2 3 8; do
        local b=$out/$ex-$target-$d
        "$compile" "$root/examples/$ex.mlir" -o "$b" --target=$target --devices=$d \
          --explain="$out/$ex-$target-$d.json" > /dev/null
      done
    done
    "$compile" "$root/examples/$ex.mlir" -o "$out/$ex-naive-4" --devices=4 \
      --exchange=naive > /dev/null
    "$compile" "$root/examples/$ex.mlir" -o "$out/$ex-dgx1-8" --devices=8 \
      --topology=dgx1-v100 > /dev/null
    "$compile" "$root/examples/$ex.mlir" -o "$out/$ex-h200x2-2" --devices=2 \
      --topology="$root/examples/topologies/h200x2-measured.json" > /dev/null
  done
  "$compile" "$root/examples/llama_block.mlir" -o "$out/llama-tied-2" --devices=2 \
    --tie-layout --strategy=megatron --memory-limit=100000000 > /dev/null
  "$compile" "$root/examples/llama_block.mlir" -o "$out/llama-random-4" --devices=4 \
    --strategy=random --seed=3 --explain="$out/llama-random-4.json" > /dev/null
  # The planning driver's other paths: dataflow, chunked and automatic
  # stages, pipeline stages on nodes, weights that move, partials in the
  # result's type, the data-parallel strategy, a memory limit's fallback,
  # naive exchanges explained.
  local opts
  while read -r name opts; do
    # shellcheck disable=SC2086
    "$compile" "$root/examples/llama_block.mlir" -o "$out/llama-$name" \
      --explain="$out/llama-$name.json" $opts > /dev/null
  done <<'CASES'
dataflow --devices=2 --stages=1x1
chunks --devices=2 --stages=1x2
auto --devices=4 --stages=auto
nodes --devices=4 --topology=nodes=2,gpus=2 --stages=2x2
moving --devices=4 --weights-replicable=false --target=cuda
partials --devices=4 --partials=out --target=cuda
dp --devices=2 --strategy=dp
lean --devices=4 --memory-limit=200000
naive --devices=3 --exchange=naive
CASES
  if [ "$bench" = --bench ]; then
    EIN_COMPILE=$compile bash "$root/bench/build_bundles.sh" "$out/bench" > /dev/null
  fi
}

# Both corpora are built at the same path: explain JSON names source
# locations.
corpus "$old" "$work/corpus" && mv "$work/corpus" "$work/old"
corpus "$new" "$work/corpus" && mv "$work/corpus" "$work/new"
files=$(cd "$work/old" && find . -type f | wc -l)
if diff -r "$work/old" "$work/new" > "$work/diff"; then
  echo "compare-bundles: $files files, all byte-identical"
elif [ "$order" = --same-order ]; then
  python3 "$root/scripts/same_schedule.py" "$work/old" "$work/new"
else
  echo "compare-bundles: the bundles differ:" >&2
  head -50 "$work/diff" >&2
  exit 1
fi
