#!/usr/bin/env bash
# Issue #13 on the GPU machine, in one run: the fused attention against
# PyTorch's SDPA (correctness matrix, then speed at 8K, 32K and 128K
# tokens), both implementations (cuDNN's fused SDPA through its backend
# API, the runtime's own kernel). Logs and tables go to $OUT.
#
# usage: bench/run_attention.sh LIBEIN_ATTENTION [--quick]
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
lib=$1
out=${OUT:-attention-run}
mkdir -p "$out"
python3 "$here/attention_vs_sdpa.py" --lib "$lib" --check > "$out/check.log" 2>&1
echo "check: rc=$? ($(grep -c ' ok ' "$out/check.log") ok, $(grep -c FAIL "$out/check.log") FAIL, $(grep -c unsupported "$out/check.log") unsupported)"
python3 "$here/attention_vs_sdpa.py" --lib "$lib" --bench > "$out/bench.log" 2>&1
echo "bench: rc=$?"
sed -n '/^ *tokens/,$p' "$out/bench.log"
