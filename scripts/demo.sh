#!/usr/bin/env bash
# The main job: set up, compile the bundled small LLaMA block (RMSNorm,
# GQA attention, RoPE, SwiGLU) for 8 virtual GPUs with ein-compile, show the
# plan (each op's spec, the simulated step) and what the bundle does, run it
# on the CPU runtime's 8 virtual GPUs and check it against the float64
# reference evaluator; then the matrix chain at 2 GPUs and the hand-written
# multi-device bundles.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh >/dev/null
EIN_OPT=$BUILD_DIR/bin/ein-opt
EIN_COMPILE=$BUILD_DIR/bin/ein-compile
EIN_RUN=$BUILD_DIR/bin/ein-run
OUT=${OUT_DIR:-$BUILD_DIR/demo}
mkdir -p "$OUT"

echo "== examples/llama_block.mlir planned for 8 GPUs (NVSwitch): one join-agg spec per op"
"$EIN_OPT" examples/llama_block.mlir --ein-attach-target="devices=8" --ein-plan -o "$OUT/llama_block.plan.mlir"
grep -o 'ein\.[a-z_]* .*spec = #ein.spec<\[[0-9, ]*\]>' "$OUT/llama_block.plan.mlir" |
  sed -E 's/^(ein\.[a-z_]*).*(#ein.spec<\[[0-9, ]*\]>)$/  \1 \2/' | sort | uniq -c
echo "  ($(grep -c 'ein.repartition' "$OUT/llama_block.plan.mlir") repartitions; the planned IR is $OUT/llama_block.plan.mlir)"
"$EIN_OPT" examples/llama_block.mlir --ein-attach-target="devices=8" --ein-enumerate-specs \
  --ein-decompose=remarks=true -o /dev/null 2>&1 | grep -o 'simulated step.*' | sed 's/^/  /'
echo
echo "== ein-compile examples/llama_block.mlir --devices=8 (the pipeline, the plan explained, the bundle)"
rm -rf "$OUT/llama_block.bundle"
"$EIN_COMPILE" examples/llama_block.mlir -o "$OUT/llama_block.bundle" --devices=8 --print-pipeline | sed 's/^/  /'
"$EIN_COMPILE" examples/llama_block.mlir -o "$OUT/llama_block.bundle" --devices=8 --explain=- | sed 's/^/  /'
echo
echo "== ein-run --check --debug: 8 virtual GPUs against the float64 reference"
"$EIN_RUN" "$OUT/llama_block.bundle" --seed=1 --check --debug | sed 's/^/  /'
echo
echo "== examples/matrix_chain.mlir on 2 GPUs (every block a library gemm)"
rm -rf "$OUT/matrix_chain.bundle"
"$EIN_COMPILE" examples/matrix_chain.mlir -o "$OUT/matrix_chain.bundle" --devices=2 | sed 's/^/  /'
"$EIN_RUN" "$OUT/matrix_chain.bundle" --seed=1 --check --debug | sed 's/^/  /'
echo
echo "== hand-written bundles on the CPU runtime's virtual GPUs (ein-run --check --debug)"
for b in "$BUILD_DIR"/runtime/test/bundles/*/; do
  grep -q '"target": "cpu"' "$b/manifest.json" || continue # CUDA ones need GPUs
  devices=$(grep -o '"devices": [0-9]*' "$b/manifest.json" | grep -o '[0-9]*$')
  echo "${b%/}: $devices devices, $(grep -c '"kind"' "$b/manifest.json") steps"
  "$EIN_RUN" "$b" --seed=1 --check --debug | sed 's/^/  /'
done
