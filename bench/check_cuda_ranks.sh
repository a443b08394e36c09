#!/usr/bin/env bash
# CUDA ranks over MPI (issue 56 item 3; docs/distributed.md, "CUDA ranks"):
# CUDA bundles compiled for nodes=K,gpus=G run as K processes under mpirun,
# every rank's G devices on GPU 0 (--device-map=0,...: one 0 per device of
# the rank's node), transfers between nodes through the MPI transport
# (EIN_TRANSPORT=mpi: device to pinned host, MPI, host to device), each
# checked against the reference on rank 0. Two steps, as the GPU machine
# has no compiler:
#
#   here:  bash bench/check_cuda_ranks.sh build [DIR]
#   there: EIN_BUILD_DIR=gpu-run bash bench/check_cuda_ranks.sh run [DIR] [PATTERN]
#
# DIR defaults to ranks-bundles/ (git ignores it). `build` compiles, with
# --target=cuda, into DIR/bundles/NAME-KxG (topology nodes=K,gpus=G for
# 2x1, 2x2 and 4x1):
#   chain-*          bench/gen_matrix_chain.py's chains at --scale 32, the
#                    search's plan and -split (--weights-replicable=false,
#                    so blocks cross nodes);
#   llama            a small LLaMA block (examples/gen_llama_block.py
#                    --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --batch 4
#                    --seq 16, f32), the search's plan and -split;
#   llama-1x2 / -2x2 the same block as a staged plan (--stages=1x2: the
#                    batch in 2 chunks; --stages=2x2: 2 pipeline stages of
#                    2 chunks), dataflow bundles.
# Variants the compiler refuses at some topology are listed and left out.
# DIR/list.txt names each bundle: NAME NODES GPUS.
#
# `run` (from the repository root on the GPU machine; EIN_BUILD_DIR holds
# bin/ein-run and lib/libeinsummable_runtime.so; Open MPI's mpirun, 4.1 at
# /usr/bin/mpirun there, or MPIRUN) runs each bundle whose name matches
# PATTERN (grep -E; all by default) as
#   EIN_TRANSPORT=mpi mpirun --allow-run-as-root --oversubscribe -n K \
#     ein-run BUNDLE --check --debug --seed=7 --device-map=0,...,0
# within EIN_CHECK_TIMEOUT seconds (300 unless set), then one fault: rank 1
# of llama-split-2x1 stopped mid-run, which rank 0 must name within
# EIN_RANK_TIMEOUT=5 (exit non-zero, "rank 1 has died or hangs"); then the
# transport's choice with both ranks on GPU 0 (EIN_TRANSPORT unset: MPI,
# saying why; =nccl: refused, naming the devices that share the GPU) and
# ein-runtime-tests' NCCL tests (a one-rank communicator sending to itself,
# eagerly and in a CUDA graph); and prints a table last: bundle, ranks, devices per rank, verdict,
# max_rel_err, and "R right of T". Logs go to $OUT/ranks-logs when OUT is
# set, else DIR/logs. Exit 0 when all are right.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
step=${1:-}
ranks_dir=${2:-$root/ranks-bundles}
TOPOLOGIES="2x1 2x2 4x1"

build() {
  set -e
  local compile=${EIN_COMPILE:-$root/build/bin/ein-compile}
  local src=$ranks_dir/src
  # shellcheck source=/dev/null
  source "$here/bundle_dir.sh"
  start_bundle_dir "$ranks_dir"
  local skipped=()
  # compile NAME SOURCE KxG [ein-compile flags...]: into bundles/NAME-KxG;
  # a refusal is left out.
  compile() {
    local name=$1 source=$2 topo=$3
    shift 3
    local k=${topo%x*} g=${topo#*x}
    if compile_bundle "$ranks_dir" "$name-$topo" "$name-$topo $k $g" "$source" \
        --target=cuda --topology="nodes=$k,gpus=$g" "$@"; then
      echo "compiled $name-$topo: $(grep -m1 '^nodes:' "$src/$name-$topo.log" | sed 's/.*; //')"
    fi
  }
  python3 "$root/examples/gen_llama_block.py" --hidden 64 --heads 4 --kv-heads 2 \
    --ffn 128 --batch 4 --seq 16 > "$src/llama.mlir"
  for c in A-square-chain B-skinny-chain C-bushy; do
    python3 "$here/gen_matrix_chain.py" "$c" --scale 32 > "$src/$c.mlir"
  done
  for topo in $TOPOLOGIES; do
    for c in A-square-chain B-skinny-chain C-bushy; do
      compile "chain-$c" "$src/$c.mlir" "$topo"
      compile "chain-$c-split" "$src/$c.mlir" "$topo" --weights-replicable=false
    done
    compile llama "$src/llama.mlir" "$topo"
    compile llama-split "$src/llama.mlir" "$topo" --weights-replicable=false
    compile llama-1x2 "$src/llama.mlir" "$topo" --stages=1x2
    compile llama-2x2 "$src/llama.mlir" "$topo" --stages=2x2
  done
  set +e
  end_bundle_dir "$ranks_dir"
  echo "$(wc -l < "$ranks_dir/list.txt") bundles; $(du -sh "$ranks_dir" | cut -f1) in $ranks_dir"
}

run() {
  local rows=() right=0 total=0
  local pattern=${3:-.}
  local build_dir=${EIN_BUILD_DIR:-$root/build}
  export EIN_BUILD_DIR=$build_dir
  local einrun=$build_dir/bin/ein-run
  local mpirun=${MPIRUN:-$(command -v mpirun || echo /usr/bin/mpirun)}
  local logs=${OUT:+$OUT/ranks-logs}
  logs=${logs:-$ranks_dir/logs}
  mkdir -p "$logs"
  # shellcheck source=/dev/null
  source "$here/nvidia_libs.sh"
  [ -x "$einrun" ] || { echo "no ein-run in $build_dir/bin (set EIN_BUILD_DIR)"; exit 1; }
  [ -f "$ranks_dir/list.txt" ] || { echo "no $ranks_dir/list.txt: run the build step first"; exit 1; }
  nvidia-smi -L 2>/dev/null | tee "$logs/gpu.txt"
  "$mpirun" --version 2>&1 | head -1 | tee "$logs/mpi.txt"
  unset EIN_DEVICE_MAP
  export EIN_TRANSPORT=mpi OMPI_MCA_btl_vader_single_copy_mechanism=none
  # mpirun passes the environment on (-x for the ones it would not).
  local mpi_base=("$mpirun" --allow-run-as-root --oversubscribe
                  -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
  local mpi=("${mpi_base[@]}" -x EIN_TRANSPORT)
  # row NAME RANKS DEVICES_PER_RANK VERDICT [MAX_REL_ERR]: one row of the
  # table, counted (right where VERDICT is ok) and printed as it comes.
  row() {
    total=$((total + 1))
    if [ "$4" = ok ]; then right=$((right + 1)); fi
    rows+=("$1 $2 $3 $4 ${5:--}")
    echo "${rows[-1]}"
  }
  local fault_bundle=
  while read -r name k g; do
    echo "$name" | grep -Eq -- "$pattern" || continue
    local map verdict err log=$logs/$name.log bundle=$ranks_dir/bundles/$name status
    map=$(printf '0%.0s,' $(seq "$g")); map=${map%,}
    timeout "${EIN_CHECK_TIMEOUT:-300}" "${mpi[@]}" -n "$k" \
      "$einrun" "$bundle" --check --debug --seed=7 --device-map="$map" > "$log" 2>&1 < /dev/null
    status=$?
    err=$(grep -o 'max_rel_err=[^ ]*' "$log" | tail -1 | cut -d= -f2)
    if [ $status -eq 0 ] && grep -q "^ranks=$k nodes=$k " "$log" && [ -n "$err" ]; then
      verdict=ok
      case $name in llama-split-2x1) fault_bundle=$bundle ;; esac
    elif [ $status -eq 124 ]; then
      verdict=TIMEOUT
    else
      verdict=FAIL
    fi
    row "$name" "$k" "$g" "$verdict" "$err"
  done < "$ranks_dir/list.txt"

  # A rank that hangs: rank 1 stopped mid-run is named by rank 0 within
  # EIN_RANK_TIMEOUT, and the run ends non-zero (bounded by timeout 120).
  if echo fault | grep -Eq -- "$pattern"; then
    [ -n "$fault_bundle" ] || fault_bundle=$ranks_dir/bundles/llama-split-2x1
    local log=$logs/fault-stopped-rank.log
    timeout 120 env EIN_RANK_TIMEOUT=5 "${mpi[@]}" -x EIN_RANK_TIMEOUT -n 2 sh -c \
      'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 3; kill -STOP $$) & fi; exec "$0" "$@"' \
      "$einrun" "$fault_bundle" --bench --iters=1000000 --device-map=0 > "$log" 2>&1
    local status=$?
    if [ $status -ne 0 ] && [ $status -ne 124 ] && grep -q 'rank 1 has died or hangs' "$log"; then
      row fault-stopped-rank 2 1 ok
    else
      row fault-stopped-rank 2 1 "FAIL(status-$status)"
    fi
  fi

  # The transport's choice with every rank on GPU 0: auto takes MPI and
  # says why; nccl is refused, naming the devices that share a GPU. And the
  # NCCL engine itself, as far as one GPU allows: ein-runtime-tests' one-rank
  # communicator sending to itself, eagerly and inside a CUDA graph.
  if echo transport | grep -Eq -- "$pattern"; then
    local bundle=$ranks_dir/bundles/llama-split-2x1 log=$logs/transport-auto.log status
    timeout 120 env -u EIN_TRANSPORT "${mpi_base[@]}" -n 2 \
      "$einrun" "$bundle" --bench --warmup=1 --iters=3 --device-map=0 > "$log" 2>&1
    status=$?
    if [ $status -eq 0 ] && grep -q 'through MPI (.*EIN_TRANSPORT=auto, devices 0 (rank 0) and 1 (rank 1) are on one GPU)' "$log"; then
      row transport-auto-mpi 2 1 ok
    else
      row transport-auto-mpi 2 1 "FAIL(status-$status)"
    fi
    log=$logs/transport-nccl-refused.log
    timeout 120 env EIN_TRANSPORT=nccl "${mpi[@]}" -n 2 \
      "$einrun" "$bundle" --check --seed=7 --device-map=0 > "$log" 2>&1
    status=$?
    if [ $status -ne 0 ] && [ $status -ne 124 ] && grep -q 'EIN_TRANSPORT=nccl: devices 0 (rank 0) and 1 (rank 1) are on one GPU, and NCCL refuses' "$log"; then
      row transport-nccl-refused 2 1 ok
    else
      row transport-nccl-refused 2 1 "FAIL(status-$status)"
    fi
    log=$logs/nccl-one-rank.log
    if timeout 120 "$build_dir/bin/ein-runtime-tests" --gtest_filter='Nccl*' > "$log" 2>&1 &&
        grep -q '^\[  PASSED  \]' "$log" && ! grep -q SKIPPED "$log"; then
      row nccl-one-rank-communicator 1 1 ok
    else
      row nccl-one-rank-communicator 1 1 FAIL
    fi
  fi

  {
    printf '%-30s %5s %16s %-9s %s\n' bundle ranks devices_per_rank verdict max_rel_err
    for row in "${rows[@]}"; do
      # shellcheck disable=SC2086
      printf '%-30s %5s %16s %-9s %s\n' $row
    done
    echo "$right right of $total"
  } | tee "$logs/table.txt"
  [ "$right" -eq "$total" ] && [ "$total" -gt 0 ]
}

case $step in
  build) build ;;
  run) run "$@" ;;
  *) sed -n '2,/^set /{/^set /!p}' "$0"; exit 2 ;;
esac
