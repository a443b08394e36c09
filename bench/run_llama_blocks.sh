#!/usr/bin/env bash
# The LLaMA-block table of WORKLOADS.md on the GPU machine, in one run: each
# workload's ein bundles (BUNDLES/NAME-1 and, with 2 GPUs, BUNDLES/NAME-2 and
# the weights-not-replicated BUNDLES/NAME-2w, from bench/build_bundles.sh)
# timed with ein-run --bench, their outputs on the same seeded inputs
# compared (1 GPU against 2; COMPARE=0 skips it, which saves the host's
# minutes of writing and reading the outputs), and the PyTorch peers (single,
# tp and dp; eager and torch.compile, the faster kept) timed in the same run, under bench/peer_memory.py, which reads
# each rank's GPU memory per workload. Logs go to $OUT; two tables (times,
# then memory) are printed last.
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
compiled="$here/peers/torch_compile_block.py"
memory="$here/peer_memory.py"
# One-GPU cases see one GPU (WORKLOADS.md), so nothing else can touch the other.
CUDA_VISIBLE_DEVICES=0 timeout 600 python3 "$memory" "$peer" --strategy single --workloads "$list" > "$out/torch-single.txt" 2> "$out/torch-single.err"
# The same block through torch.compile (Inductor, CUDA graph): the best
# PyTorch is the faster of eager and compiled, per workload and strategy.
CUDA_VISIBLE_DEVICES=0 timeout 600 python3 "$compiled" --strategy single --workloads "$list" > "$out/compile-single.txt" 2> "$out/compile-single.err"
if [ "$gpus" -ge 2 ]; then
  for strategy in tp dp; do
    timeout 600 python3 -m torch.distributed.run --nproc_per_node=2 "$memory" "$peer" \
      --strategy $strategy --workloads "$list" > "$out/torch-$strategy.txt" 2> "$out/torch-$strategy.err"
    timeout 600 python3 -m torch.distributed.run --nproc_per_node=2 "$compiled" \
      --strategy $strategy --workloads "$list" > "$out/compile-$strategy.txt" 2> "$out/compile-$strategy.err"
  done
fi
# The faster of eager and compiled for one strategy (either may be missing).
peer_ms() {
  awk -v w="$1" '$1 == w && $4 ~ /^[0-9.]+$/ {print $4}' "$out/torch-$2.txt" "$out/compile-$2.txt" 2>/dev/null | sort -g | head -1
}
# The peer's memory on its fullest rank: the device's drop (cudaMemGetInfo).
peer_mib() { awk -v w="$1" '$1 == "memory" && $2 == w && $7 > m {m = $7} END {if (m) print m}' "$out/torch-$2.txt" 2>/dev/null; }
ein_ms() { grep -o 'median_ms=[0-9.]*' "$1" 2>/dev/null | cut -d= -f2; }
# ein's memory on its fullest GPU: planned/measured.
ein_mib() {
  [ -f "$1" ] || return 0
  awk '/^memory device=/ {for (i = 3; i <= NF; ++i) {split($i, kv, "="); v[kv[1]] = kv[2]}
       if (v["planned_mib"] > p) p = v["planned_mib"]; if (v["measured_mib"] > m) m = v["measured_mib"]}
       END {if (p) printf "%.0f/%.0f", p, m}' "$1"
}
ratio() { [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", b / a}' || echo -; }
printf '%-18s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n' workload ein_1 torch_1 ein_2 torch_tp torch_dp ein_2w ratio_1 ratio_2 ratio_2w | tee "$out/table.txt"
printf '%-18s %12s %8s %12s %8s %8s %12s\n' workload ein_1 torch_1 ein_2 torch_tp torch_dp ein_2w > "$out/memory.txt"
for w in "${workloads[@]}"; do
  declare -A ms=([1]=- [2]=- [2w]=-)
  for d in 1 2 2w; do
    [ -d "$bundles/$w-$d" ] && [ "${d%w}" -le "$gpus" ] || continue
    visible=0,1; [ "$d" = 1 ] && visible=0
    [ "${COMPARE:-1}" = 0 ] ||
      CUDA_VISIBLE_DEVICES=$visible timeout 300 "$run" "$bundles/$w-$d" --seed=3 --outputs="/tmp/$w-$d.npy" > "$out/$w-$d.run.log" 2>&1
    CUDA_VISIBLE_DEVICES=$visible timeout 300 "$run" "$bundles/$w-$d" --bench --warmup=2 --iters=10 > "$out/$w-$d.log" 2>&1
    ms[$d]=$(ein_ms "$out/$w-$d.log"); ms[$d]=${ms[$d]:-fail}
  done
  for d in 2 2w; do
    if [ -f "/tmp/$w-1.npy" ] && [ -f "/tmp/$w-$d.npy" ]; then
      echo "$w 1 GPU vs $d: $(python3 "$here/compare_outputs.py" "/tmp/$w-1.npy" "/tmp/$w-$d.npy" --dtype bf16 2>&1 | tail -1)" >> "$out/compare.txt"
    fi
  done
  rm -f "/tmp/$w-1.npy" "/tmp/$w-2.npy" "/tmp/$w-2w.npy"
  t1=$(peer_ms "$w" single); tp=$(peer_ms "$w" tp); dp=$(peer_ms "$w" dp)
  best2=$(printf '%s\n' $tp $dp | sort -g | head -1)
  printf '%-18s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n' "$w" "${ms[1]}" "${t1:--}" "${ms[2]}" "${tp:--}" "${dp:--}" "${ms[2w]}" \
    "$(ratio "${ms[1]}" "$t1")" "$(ratio "${ms[2]}" "$best2")" "$(ratio "${ms[2w]}" "$tp")" | tee -a "$out/table.txt"
  printf '%-18s %12s %8s %12s %8s %8s %12s\n' "$w" "$(ein_mib "$out/$w-1.log")" "$(peer_mib "$w" single)" \
    "$(ein_mib "$out/$w-2.log")" "$(peer_mib "$w" tp)" "$(peer_mib "$w" dp)" "$(ein_mib "$out/$w-2w.log")" >> "$out/memory.txt"
done
echo "(ms, median of 10 after 2 warm-ups; PyTorch columns are the faster of eager and torch.compile; ratio = PyTorch / ein, above 1 ein is faster; ratio_2 against the faster of tp and dp, ratio_2w (weights not replicated) against tp)" | tee -a "$out/table.txt"
echo "(MiB on the fullest GPU; ein planned/measured by cudaMemGetInfo, the peer measured by cudaMemGetInfo, bench/peer_memory.py)" >> "$out/memory.txt"
for w in "${workloads[@]}"; do
  for d in 2 2w; do
    [ -f "$bundles/$w-$d.json" ] &&
      echo "plan $w-$d: $(python3 "$here/plan_phrase.py" llama "$bundles/$w-$d.json")" | tee -a "$out/table.txt"
  done
done
cat "$out/compare.txt" 2>/dev/null
cat "$out/memory.txt"
