#!/usr/bin/env bash
# Matrix chains A-E (WORKLOADS.md) compiled by ein-opt (ein-plan,
# ein-synthesize-exchanges, ein-write-bundle) and timed with ein-run on the
# GPU machine, next to the JAX peer in the same run.
#
#   bash bench/run_chains.sh BUNDLES_DIR EIN_RUN OUT_DIR
#
# BUNDLES_DIR holds, per chain C: C (2 GPUs), C-1gpu and C-small (2 GPUs,
# every dimension / 32, for --check against the reference evaluator), as
# built on the build machine (see docs/performance.md).
set -uo pipefail
bundles=$1 run=$2 out=$3
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
chains="A-square-chain B-skinny-chain C-bushy D-batched E-big-matmul"
for c in $chains; do
  check=$("$run" "$bundles/$c-small" --check 2>&1 | tail -1)
  one=$("$run" "$bundles/$c-1gpu" --bench --warmup=2 --iters=10 2>&1 | grep -o 'median_ms=[0-9.]*' | cut -d= -f2)
  two=$("$run" "$bundles/$c" --bench --warmup=2 --iters=10 2>&1 | tee "$out/$c.log" | grep -o 'median_ms=[0-9.]*' | cut -d= -f2)
  echo "ein $c 1gpu=$one 2gpu=$two small-check: $check" | tee -a "$out/ein.txt"
done
timeout 420 python3 bench/peers/jax_matrix_chain.py > "$out/jax.txt" 2> "$out/jax.err"
echo "jax rc=$?"
cat "$out/jax.txt"
