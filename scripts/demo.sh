#!/usr/bin/env bash
# The main job, until ein-compile lands: set up, verify every bundled example,
# attach an 8-GPU NVSwitch target to the small LLaMA block and print it,
# export the block to program.json and evaluate it with the float64 reference
# evaluator on seeded inputs, plan it for 8 GPUs (each op's spec and the
# simulated step), lower the plan to per-GPU blocks and exchanges and check
# that program with ein-eval against the block, compile the matrix chain to
# a bundle and run it on 2 virtual GPUs, then run the hand-written bundles
# with ein-run --check.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh >/dev/null
EIN_OPT=$BUILD_DIR/bin/ein-opt
EIN_EVAL=$BUILD_DIR/bin/ein-eval
EIN_RUN=$BUILD_DIR/bin/ein-run
OUT=${OUT_DIR:-$BUILD_DIR/demo}
mkdir -p "$OUT"

echo "== bundled examples (verified by ein-opt)"
for f in examples/*.mlir; do
  ops=$("$EIN_OPT" "$f" | grep -o 'ein\.[a-z_]*' | grep -v '^ein\.\(weight\|target\|yield\|spec\)$' |
        sort | uniq -c | awk '{printf "%s%s x%s", sep, $2, $1; sep=", "}')
  echo "$f: $ops"
done
echo
echo "== examples/llama_block.mlir with ein-attach-target=\"devices=8 topology=nvswitch chip=sm_90\""
"$EIN_OPT" examples/llama_block.mlir \
  --ein-attach-target="devices=8 topology=nvswitch chip=sm_90" --verify-each
echo
echo "== program.json of the block, evaluated in float64 (ein-eval --seed=1)"
"$EIN_OPT" examples/llama_block.mlir --ein-export-program="$OUT/llama_block.json" -o /dev/null
"$EIN_EVAL" "$OUT/llama_block.json" --seed=1 --outputs="$OUT/llama_block.out.npy"
echo "wrote $OUT/llama_block.json and $OUT/llama_block.out.npy"
echo
echo "== the block planned for 8 GPUs (ein-plan: one spec per op, relations, exchanges)"
"$EIN_OPT" examples/llama_block.mlir --ein-attach-target="devices=8" --ein-plan -o "$OUT/llama_block.plan.mlir"
grep -o 'ein\.[a-z_]* .*spec = #ein.spec<\[[0-9, ]*\]>' "$OUT/llama_block.plan.mlir" |
  sed -E 's/^(ein\.[a-z_]*).*(#ein.spec<\[[0-9, ]*\]>)$/  \1 \2/'
echo "  ($(grep -c 'ein.repartition' "$OUT/llama_block.plan.mlir") repartitions; the planned IR is $OUT/llama_block.plan.mlir)"
"$EIN_OPT" examples/llama_block.mlir --ein-attach-target="devices=8" --ein-enumerate-specs \
  --ein-decompose=remarks=true -o /dev/null 2>&1 | grep -o 'simulated step.*' | sed 's/^/  /'
echo
echo "== the block lowered to 8 GPUs (ein-synthesize-exchanges, naive exchanges), checked with ein-eval"
"$EIN_OPT" examples/llama_block.mlir --ein-attach-target="devices=8" --ein-plan --ein-synthesize-exchanges \
  -o "$OUT/llama_block.devices.mlir" --ein-export-program="$OUT/llama_block.devices.json"
printf '  %s block kernels, %s transfers, %s aggregations; the device-level IR is %s\n' \
  "$(grep -c 'device = ' "$OUT/llama_block.devices.mlir")" \
  "$(grep -c 'ein.transfer' "$OUT/llama_block.devices.mlir")" \
  "$(grep -c 'ein.aggregate' "$OUT/llama_block.devices.mlir")" "$OUT/llama_block.devices.mlir"
logical=$("$EIN_EVAL" "$OUT/llama_block.json" --seed=1 | sed "s/'[^']*'//")
devices=$("$EIN_EVAL" "$OUT/llama_block.devices.json" --seed=1 | sed "s/'[^']*'//")
if [ "$logical" = "$devices" ]; then
  echo "  the 8-GPU program computes the block's result: $devices"
else
  echo "  MISMATCH: logical '$logical', device-level '$devices'" >&2
  exit 1
fi
echo
echo "== examples/matrix_chain.mlir compiled to a bundle for 2 GPUs (ein-write-bundle) and run on the CPU runtime"
rm -rf "$OUT/matrix_chain.bundle"
"$EIN_OPT" examples/matrix_chain.mlir --ein-attach-target="devices=2" --ein-plan --ein-synthesize-exchanges \
  --ein-write-bundle="dir=$OUT/matrix_chain.bundle target=cpu" -o /dev/null
echo "  $(grep -c '"kind"' "$OUT/matrix_chain.bundle/manifest.json") steps in $OUT/matrix_chain.bundle"
"$EIN_RUN" "$OUT/matrix_chain.bundle" --seed=1 --check --debug | sed 's/^/  /'
echo
echo "== hand-written bundles on the CPU runtime's virtual GPUs (ein-run --check --debug)"
for b in "$BUILD_DIR"/runtime/test/bundles/*/; do
  grep -q '"target": "cpu"' "$b/manifest.json" || continue # CUDA ones need GPUs
  devices=$(grep -o '"devices": [0-9]*' "$b/manifest.json" | grep -o '[0-9]*$')
  echo "${b%/}: $devices devices, $(grep -c '"kind"' "$b/manifest.json") steps"
  "$EIN_RUN" "$b" --seed=1 --check --debug | sed 's/^/  /'
done
