#!/usr/bin/env bash
# The LLaMA-block table of WORKLOADS.md on the GPU machine, in one run: each
# workload's ein bundles (BUNDLES/NAME-1 and, with 2 GPUs, BUNDLES/NAME-2,
# from ein-compile --target=cuda [--devices=2 --tie-layout]) timed with
# ein-run --bench, their outputs on the same seeded inputs compared (1 GPU
# against 2; COMPARE=0 skips it, which saves the host's minutes of writing
# and reading the outputs), and the PyTorch peer (single, tp and dp) timed
# in the same run. Logs go to $OUT; the table is printed last.
#
# usage: bench/run_llama_blocks.sh EIN_RUN BUNDLES [WORKLOAD ...]
set -uo pipefail
here=$(dirname "$0")
source "$here/nvidia_libs.sh"
run=$1 bundles=$2; shift 2
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(w1-l3-8b-b1-s8k w2-l3-8b-b8-s2k
  w3-l2-7b-b4-s4k w4-l3-70b-b1-s4k w5-l3-8b-b32-s512 long-l3-8b-s128k)
out=${OUT:-llama-blocks}
mkdir -p "$out"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
list=$(IFS=,; echo "${workloads[*]}")
peer="$here/peers/torch_llama_block.py"
python3 "$peer" --strategy single --workloads "$list" > "$out/torch-single.txt" 2> "$out/torch-single.err"
if [ "$gpus" -ge 2 ]; then
  for strategy in tp dp; do
    python3 -m torch.distributed.run --nproc_per_node=2 "$peer" --strategy $strategy \
      --workloads "$list" > "$out/torch-$strategy.txt" 2> "$out/torch-$strategy.err"
  done
fi
peer_ms() { awk -v w="$1" '$1 == w && $4 ~ /^[0-9.]+$/ {print $4}' "$out/torch-$2.txt" 2>/dev/null; }
ein_ms() { grep -o 'median_ms=[0-9.]*' "$1" | cut -d= -f2; }
printf '%-18s %9s %9s %9s %9s %9s %10s %10s\n' workload ein_1 torch_1 ein_2 torch_tp torch_dp ratio_1 ratio_2 | tee "$out/table.txt"
for w in "${workloads[@]}"; do
  e1=- e2=- ratio1=- ratio2=-
  for d in 1 2; do
    [ -d "$bundles/$w-$d" ] && [ "$d" -le "$gpus" ] || continue
    [ "${COMPARE:-1}" = 0 ] ||
      "$run" "$bundles/$w-$d" --seed=3 --outputs="/tmp/$w-$d.npy" > "$out/$w-$d.run.log" 2>&1
    "$run" "$bundles/$w-$d" --bench --warmup=2 --iters=10 > "$out/$w-$d.log" 2>&1
    ms=$(ein_ms "$out/$w-$d.log"); ms=${ms:-fail}
    if [ $d = 1 ]; then e1=$ms; else e2=$ms; fi
  done
  if [ -f "/tmp/$w-1.npy" ] && [ -f "/tmp/$w-2.npy" ]; then
    echo "$w: $(python3 "$here/compare_outputs.py" "/tmp/$w-1.npy" "/tmp/$w-2.npy" --dtype bf16 2>&1 | tail -1)" >> "$out/compare.txt"
  fi
  rm -f "/tmp/$w-1.npy" "/tmp/$w-2.npy"
  t1=$(peer_ms "$w" single); tp=$(peer_ms "$w" tp); dp=$(peer_ms "$w" dp)
  best2=$(printf '%s\n' $tp $dp | sort -g | head -1)
  [[ $e1 =~ ^[0-9.]+$ && -n $t1 ]] && ratio1=$(awk -v a="$e1" -v b="$t1" 'BEGIN {printf "%.2fx", b / a}')
  [[ $e2 =~ ^[0-9.]+$ && -n $best2 ]] && ratio2=$(awk -v a="$e2" -v b="$best2" 'BEGIN {printf "%.2fx", b / a}')
  printf '%-18s %9s %9s %9s %9s %9s %10s %10s\n' "$w" "$e1" "${t1:--}" "$e2" "${tp:--}" "${dp:--}" "$ratio1" "$ratio2" | tee -a "$out/table.txt"
done
echo "(ms, median of 10 after 2 warm-ups; ratio = PyTorch / ein, above 1 ein is faster; ratio_2 against the faster of tp and dp)" | tee -a "$out/table.txt"
cat "$out/compare.txt" 2>/dev/null
