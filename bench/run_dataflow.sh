#!/bin/bash
# The dataflow runtime on one H200 (bench/results/2026-12-04-dataflow-h200x1.md):
# --check of a small block plain, chunked (a dataflow bundle) and with the
# streams forced either way; the blocks plain and chunked, timed. Bundles:
# see the results file. Run from the repository root on the GPU machine.
source bench/nvidia_libs.sh
R=build/bin/ein-run
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L/gpu.txt
(build/bin/ein-runtime-tests > $L/rt-default.log 2>&1; echo "rc=$?" >> $L/rt-default.log)
(EIN_CUDA_STREAMS=dataflow build/bin/ein-runtime-tests > $L/rt-dataflow.log 2>&1; echo "rc=$?" >> $L/rt-dataflow.log)
for b in small-1 small-c2 small-c4; do
  timeout 300 $R gpu-large/$b --check --debug --seed=3 > $L/check-$b.log 2>&1; echo "rc=$?" >> $L/check-$b.log
done
EIN_CUDA_STREAMS=dataflow timeout 300 $R gpu-large/small-1 --check --debug --seed=3 > $L/check-small-1-df.log 2>&1; echo "rc=$?" >> $L/check-small-1-df.log
EIN_CUDA_STREAMS=1 timeout 300 $R gpu-large/small-c2 --check --seed=3 > $L/check-small-c2-one.log 2>&1; echo "rc=$?" >> $L/check-small-c2-one.log
bench() { # name bundle env...
  local n=$1 b=$2; shift 2
  env "$@" timeout 120 $R gpu-large/$b --bench --warmup=3 --iters=20 > $L/bench-$n.log 2>&1
  echo "$n $(grep -o 'median_ms=[0-9.]*' $L/bench-$n.log | head -1) $(grep -o 'error.*' $L/bench-$n.log | head -1)"
}
for round in 1; do
for w in w1 w2 w3 w5; do
  bench $w-1-r$round $w-1 X=1
  bench $w-1-df-r$round $w-1 EIN_CUDA_STREAMS=dataflow
done
for c in w2-c2 w2-c4 w3-c2 w3-c4 w5-c4 w5-c8; do
  bench $c-r$round $c X=1
  bench $c-one-r$round $c EIN_CUDA_STREAMS=1
done
done > $L/bench-table.txt
timeout 120 $R gpu-large/w2-c2 --profile=$L/w2-c2.trace.json > $L/profile-w2-c2.log 2>&1
cd $OUT && tar czf logs.tgz logs && cd - > /dev/null
echo "== runtime tests"; tail -3 $L/rt-default.log; tail -3 $L/rt-dataflow.log
echo "== checks"; for f in $L/check-*.log; do echo "$(basename $f): $(grep -o 'max_rel_err=[0-9.e+-]*' $f) $(tail -1 $f)"; done
echo "== bench"; cat $L/bench-table.txt
