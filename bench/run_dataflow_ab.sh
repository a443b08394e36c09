#!/bin/bash
# One H200: each block plain against the same plan as a dataflow bundle
# (--stages=1x1), interleaved, four rounds; --check of the small dataflow
# block (bench/results/2026-12-04-dataflow-h200x1.md says how the bundles
# are built).
source bench/nvidia_libs.sh
R=build/bin/ein-run
L=$OUT/logs; mkdir -p $L
timeout 300 $R gpu-large/small-w --check --debug --seed=4 > $L/check-small-w.log 2>&1; echo "rc=$?" >> $L/check-small-w.log
for round in 1 2 3 4; do
  for w in w1 w2 w3 w4 w5; do
    for v in 1 w; do
      timeout 120 $R gpu-large/$w-$v --bench --warmup=3 --iters=20 > $L/b-$w-$v-$round.log 2>&1
      echo "$w $v $round $(grep -o 'median_ms=[0-9.]*' $L/b-$w-$v-$round.log | cut -d= -f2)"
    done
  done
done > $L/table.txt
cd $OUT && tar czf logs.tgz logs && cd - > /dev/null
grep -o "max_rel_err=[0-9.e+-]*" $L/check-small-w.log
python3 - "$L/table.txt" <<'PY'
import sys, statistics
rows=[l.split() for l in open(sys.argv[1]) if len(l.split())==4]
d={}
for w,v,r,ms in rows: d.setdefault((w,v),[]).append(float(ms))
print("workload plain(median of rounds) dataflow ratio  all-rounds-plain / all-rounds-dataflow")
import math
g=[]
for w in ["w1","w2","w3","w4","w5"]:
    a=statistics.median(d[(w,"1")]); b=statistics.median(d[(w,"w")]); g.append(a/b)
    print(w, round(a,3), round(b,3), round(a/b,3), d[(w,"1")], d[(w,"w")])
print("geomean plain/dataflow", round(math.exp(sum(map(math.log,g))/len(g)),3))
PY
