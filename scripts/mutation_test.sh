#!/bin/bash
# The mutation campaign of issue 28 as a test (ctest "mutations"): compiles
# CPU bundles of the examples and a few front-end programs (partial sums,
# convolution halos, inserts, views), then runs scripts/mutate_bundles.py on
# them: every kind of mutation at spread sites of every bundle, and random
# single mutations (the property test). Every mutation must be refused with
# a clear error or give bit-identical outputs.
#
# usage: scripts/mutation_test.sh BUILD_DIR [RANDOM_COUNT] [SEED]
set -euo pipefail
build=$(cd "$1" && pwd)
count=${2:-200}
seed=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/ein-mutations-XXXXXX)
trap 'rm -rf "$work"' EXIT
compile() { # SOURCE NAME DEVICES
  "$build/bin/ein-compile" "$1" -o "$work/$2" --devices="$3" > /dev/null
}
for d in 1 3; do
  for f in mlp llama_block matrix_chain; do
    compile "$root/examples/$f.mlir" "$f$d" "$d"
  done
done
inputs=$root/test/Pipelines/Inputs
compile "$inputs/inner_cut.mlir" inner4 4
compile "$inputs/linalg_conv_nhwc.mlir" conv2 2
compile "$inputs/linalg_insert.mlir" insert3 3
compile "$inputs/linalg_layernorm.mlir" layernorm2 2
exec python3 "$root/scripts/mutate_bundles.py" --bin "$build/bin" --each ${EIN_MUTATE_FLAGS:-} \
  --random "$count" --seed "$seed" "$work"/*/
