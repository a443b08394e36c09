#!/usr/bin/env bash
# The main job, until ein-compile lands: set up, then take the bundled small
# LLaMA block, attach an 8-GPU NVSwitch target, verify it, print a summary of
# every bundled example and the block's IR as ein-opt prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh >/dev/null
EIN_OPT=$BUILD_DIR/bin/ein-opt

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
