#!/usr/bin/env bash
# Logical devices on one GPU (issue 56; docs/cuda-runtime.md, "Logical
# devices"): bundles compiled for 2, 3, 4 and 8 GPUs run with every device
# on GPU 0 through ein-run --device-map, each checked, and the front end's
# models through einsummable.load(..., device_map=[0] * N). Two steps, as
# the GPU machine has no compiler:
#
#   here:  bash bench/check_logical_devices.sh build [DIR]
#   there: EIN_BUILD_DIR=gpu-run bash bench/check_logical_devices.sh run [DIR] [PATTERN]
#
# DIR defaults to ldev-bundles/ (git ignores it). `build` compiles, with
# the generators and small programs bench/build_bundles.sh uses for its
# check set, into DIR/bundles/NAME-N (--target=cuda --devices=N):
#   llama-d64        a small LLaMA block (bf16, GQA, head dim 64, batch 2):
#                    the search's plan (weights replicated), -split
#                    (--weights-replicable=false: weights split),
#                    -megatron (--strategy=megatron), -1x1 (--stages=1x1,
#                    the plan as a dataflow bundle) and -1x2 (--stages=1x2:
#                    the batch in 2 chunks);
#   llama-d128       the same paths in f16 at head dim 128 (build_bundles);
#   llama-seq-1x4    a batch-1 block in 4 sequence chunks (--stages=1x4),
#                    causal attention per chunk over the keys up to it;
#   chain-*          bench/gen_matrix_chain.py's chains at --scale 32;
#   matmul-3d        the 3-D matmul, as planned in bench/matmul_3d_plan.mlir
#                    (8 only);
#   ragged-gemm      1000 x 1001 x 999 bf16: cuts of odd sizes;
#   import-*         test/Pipelines/Inputs/linalg_*.mlir through the
#                    importer, on 3 devices (7 rows and columns cut
#                    unevenly) and 8 (the shard-pinned ones on their grids);
#   conv-grouped     grouped and depthwise bf16 convolutions (cuDNN), cut by
#                    channels, and -spatial (--strategy=spatial: rows and
#                    columns, with halos);
#   gather-gpt2      bench/gather_gpt2.mlir, the GPT-2 embedding lookup, with
#                    its table split (--weights-replicable=false): a
#                    vocabulary-parallel gather;
#   big-w1           LLaMA w1 (8B, 8K tokens, bf16), and -1x4 in sequence
#                    chunks, also at 1 device: too big for the CPU
#                    reference, so `run` compares it with its 1-device
#                    bundle's outputs (bench/compare_outputs.py);
# and bench/check_logical_devices.py's models (python/tests/models.py) for
# 2 and 4 devices under DIR/python. Variants a program cannot take at some
# N (the compiler refuses) are listed and left out. DIR/list.txt names each
# bundle: NAME DEVICES REFERENCE (check, or the 1-device bundle to compare
# with).
#
# `run` (from the repository root on the GPU machine; EIN_BUILD_DIR holds
# bin/ein-run and lib/libeinsummable_runtime.so) runs each bundle whose
# name matches PATTERN (a grep -E pattern; all by default) with
# `ein-run --check --debug --seed=7 --device-map=0,...,0` (one 0 per
# device), checks that it printed "logical devices N on 1 GPU: timings are
# not those of N GPUs", then ein-runtime-tests' test of the C API on one
# GPU where EIN_BUILD_DIR/bin has it, then the Python part, and prints a
# table last:
# bundle, devices, map, verdict, max_rel_err, and "R right of T". Logs go
# to $OUT/ldev-logs when OUT is set, else DIR/logs. Exit 0 when all are right.
# Each ein-run gets EIN_CHECK_TIMEOUT seconds (600 unless set).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
step=${1:-}
ldev_dir=${2:-$root/ldev-bundles}
DEVICE_COUNTS="2 3 4 8"

build() {
  set -e
  local compile=${EIN_COMPILE:-$root/build/bin/ein-compile}
  local src=$ldev_dir/src
  # shellcheck source=/dev/null
  source "$here/bundle_dir.sh"
  start_bundle_dir "$ldev_dir"
  local skipped=()
  # compile NAME SOURCE N REFERENCE [ein-compile flags...]: into
  # bundles/NAME-N, listed with REFERENCE (check, - for a reference
  # itself, or the bundle to compare with); a refusal is left out.
  compile() {
    local name=$1 source=$2 n=$3 reference=$4
    shift 4
    if compile_bundle "$ldev_dir" "$name-$n" "$name-$n $n $reference" "$source" \
        --devices="$n" --target=cuda "$@"; then
      echo "compiled $name-$n"
    fi
  }
  block() { python3 "$root/examples/gen_llama_block.py" "$@"; }
  # The front end needs PyTorch: Debian's python3 here (README), or
  # EIN_PYTHON.
  local torch_python=${EIN_PYTHON:-/usr/bin/python3}
  [ -x "$torch_python" ] || torch_python=python3

  # The small check programs of bench/build_bundles.sh.
  block --hidden 512 --heads 8 --kv-heads 2 --ffn 1024 --batch 2 --seq 200 --dtype bf16 > "$src/d64.mlir"
  block --hidden 1024 --heads 8 --kv-heads 2 --ffn 2048 --batch 1 --seq 384 --dtype f16 > "$src/d128.mlir"
  block --hidden 256 --heads 4 --kv-heads 2 --ffn 512 --batch 1 --seq 256 --dtype bf16 > "$src/seq.mlir"
  for n in $DEVICE_COUNTS; do
    compile llama-d64 "$src/d64.mlir" "$n" check
    compile llama-d64-split "$src/d64.mlir" "$n" check --weights-replicable=false
    compile llama-d64-megatron "$src/d64.mlir" "$n" check --strategy=megatron --tie-layout
    compile llama-d64-1x1 "$src/d64.mlir" "$n" check --stages=1x1
    compile llama-d64-1x2 "$src/d64.mlir" "$n" check --stages=1x2
    compile llama-d128 "$src/d128.mlir" "$n" check
    compile llama-seq-1x4 "$src/seq.mlir" "$n" check --stages=1x4
  done

  for c in A-square-chain B-skinny-chain C-bushy D-batched E-big-matmul; do
    python3 "$here/gen_matrix_chain.py" "$c" --scale 32 > "$src/$c-small.mlir"
    for n in $DEVICE_COUNTS; do
      compile "chain-$c" "$src/$c-small.mlir" "$n" check
    done
  done

  # The 3-D matmul, compiled as planned (the search cuts this one [4, 1,
  # 2]): each input block read by two join blocks, each output block two
  # partial sums, on 8 devices.
  compile matmul-3d "$here/matmul_3d_plan.mlir" 8 check

  python3 - "$here" > "$src/ragged-gemm.mlir" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from gen_kernel_bench import gemm
print(gemm("ragged_gemm", 1000, 1001, 999))
PY
  for n in $DEVICE_COUNTS; do
    compile ragged-gemm "$src/ragged-gemm.mlir" "$n" check
  done

  # Imported linalg (f32, shapes of 7 and 8): unevenly cut on 3 devices,
  # and on 8; the bf16 GQA attention of build_bundles (the fused step).
  local inputs=$root/test/Pipelines/Inputs
  sed -e 's/0xFF800000 : f32/0xFF80 : bf16/; s/f32/bf16/g; s/8x7x8x/8x256x64x/g' \
      -e 's/8x7x8/8x256x64/g; s/2x7x8/2x256x64/g; s/8x7x7/8x256x256/g; s/8x7/8x256/g' \
      -e 's/0.353553385/0.125/' "$inputs/linalg_gqa_attention.mlir" > "$src/linalg_gqa_attention_bf16.mlir"
  for f in "$inputs"/linalg_*.mlir "$src/linalg_gqa_attention_bf16.mlir"; do
    local p
    p=$(basename "$f" .mlir); p=import-${p#linalg_}
    p=${p//_/-}
    # A shard pin names its grid's devices (4 and 2); the others go on 3
    # and 8.
    local counts="3 8"
    case $p in
      import-pinned-mlp) counts=4 ;;
      import-softmax-pinned) counts=2 ;;
    esac
    for n in $counts; do
      compile "$p" "$f" "$n" check
    done
  done

  sed 's/f32/bf16/g' "$root/test/Tools/Inputs/conv-grouped.mlir" > "$src/conv-grouped-bf16.mlir"
  for n in $DEVICE_COUNTS; do
    compile conv-grouped "$src/conv-grouped-bf16.mlir" "$n" check --weights=1,3,5
    compile conv-grouped-spatial "$src/conv-grouped-bf16.mlir" "$n" check --weights=1,3,5 --strategy=spatial
  done

  for n in $DEVICE_COUNTS; do
    compile gather-gpt2 "$here/gather_gpt2.mlir" "$n" check --weights-replicable=false
  done

  # Too big for the reference: compared with the same program on 1 device.
  if [ "${LDEV_BIG:-1}" = 1 ]; then
    block --workload w1-l3-8b-b1-s8k --dtype bf16 > "$src/w1.mlir"
    compile big-w1 "$src/w1.mlir" 1 -
    for n in 2 4 8; do
      compile big-w1 "$src/w1.mlir" "$n" big-w1-1
    done
    for n in 2 4; do
      compile big-w1-1x4 "$src/w1.mlir" "$n" big-w1-1 --stages=1x4
    done
  fi

  set +e
  PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" EIN_BUILD_DIR="${EIN_BUILD_DIR:-$root/build}" \
    "$torch_python" "$here/check_logical_devices.py" build "$ldev_dir/python"
  local python_status=$?
  set -e
  end_bundle_dir "$ldev_dir"
  echo "$(grep -vc ' -$' "$ldev_dir/list.txt") bundles to check, $(ls -d "$ldev_dir"/python/*/bundle-* 2>/dev/null | wc -l) Python bundles; $(du -sh "$ldev_dir" | cut -f1) in $ldev_dir"
  return $python_status
}

run() {
  local rows=() right=0 total=0
  local pattern=${3:-.}
  local build_dir=${EIN_BUILD_DIR:-$root/build}
  export EIN_BUILD_DIR=$build_dir
  local einrun=$build_dir/bin/ein-run
  local logs=${OUT:+$OUT/ldev-logs}
  logs=${logs:-$ldev_dir/logs}
  mkdir -p "$logs"
  # shellcheck source=/dev/null
  source "$here/nvidia_libs.sh"
  [ -x "$einrun" ] || { echo "no ein-run in $build_dir/bin (set EIN_BUILD_DIR)"; exit 1; }
  nvidia-smi -L 2>/dev/null | tee "$logs/gpu.txt"
  unset EIN_DEVICE_MAP
  while read -r name n reference; do
    [ "$reference" = - ] && continue
    echo "$name" | grep -Eq -- "$pattern" || continue
    local map verdict err log=$logs/$name.log bundle=$ldev_dir/bundles/$name
    map=$(printf '0%.0s,' $(seq "$n")); map=${map%,}
    total=$((total + 1))
    if [ "$reference" = check ]; then
      timeout "${EIN_CHECK_TIMEOUT:-600}" "$einrun" "$bundle" --check --debug --seed=7 --device-map="$map" > "$log" 2>&1
      status=$?
      err=$(grep -o 'max_rel_err=[^ ]*' "$log" | tail -1 | cut -d= -f2)
    else
      # Outputs of the bundle on one GPU as N devices, and of its 1-device
      # bundle (run once), on the same seeded inputs.
      local ref=$logs/$reference.npy
      if [ ! -f "$ref" ]; then
        timeout "${EIN_CHECK_TIMEOUT:-600}" "$einrun" "$ldev_dir/bundles/$reference" --seed=7 --outputs="$ref" > "$logs/$reference.log" 2>&1 || rm -f "$ref"
      fi
      rm -f "$logs/$name.npy"
      timeout "${EIN_CHECK_TIMEOUT:-600}" "$einrun" "$bundle" --debug --seed=7 --device-map="$map" --outputs="$logs/$name.npy" > "$log" 2>&1
      status=$?
      local dtype
      dtype=$(grep -o "result 0 '[^']*': [0-9x]* [a-z0-9]*" "$log" | awk '{print $NF}')
      if [ $status -eq 0 ] && [ -f "$ref" ]; then
        python3 "$here/compare_outputs.py" "$ref" "$logs/$name.npy" --dtype="$dtype" >> "$log" 2>&1 || status=1
        err=$(grep -o 'max_rel_err=[^ ]*' "$log" | tail -1 | cut -d= -f2)
        # ein-run --check's thresholds (runtime/lib/check.cpp).
        local limit=1e-4
        case $dtype in bf16) limit=2e-2 ;; f16) limit=2e-3 ;; esac
        grep -q 'finite=True' "$log" || status=1
        python3 -c "import sys; sys.exit(0 if float('${err:-inf}') <= $limit else 1)" || status=1
      elif [ ! -f "$ref" ]; then
        status=1; echo "no reference outputs: $reference failed (see $reference.log)" >> "$log"
      fi
    fi
    if [ $status -eq 0 ] && grep -qx "logical devices $n on 1 GPU: timings are not those of $n GPUs" "$log"; then
      verdict=ok; right=$((right + 1))
    elif [ $status -eq 0 ]; then
      verdict=NO-NOTICE
    else
      verdict=FAIL
    fi
    rows+=("$name $n $map $verdict ${err:--}")
    echo "$name $n $map $verdict ${err:--}"
  done < "$ldev_dir/list.txt"

  # The runtime's own test of the C API on one GPU, where gpu-run has it.
  if [ -x "$build_dir/bin/ein-runtime-tests" ] && echo runtime-test | grep -Eq -- "$pattern"; then
    total=$((total + 1))
    if "$build_dir/bin/ein-runtime-tests" --gtest_filter='Cuda.LogicalDevicesShareOneGpu:Runtime.DeviceMap*' \
        > "$logs/runtime-test.log" 2>&1 && grep -q '\[  PASSED  \] 2 tests' "$logs/runtime-test.log"; then
      right=$((right + 1)); rows+=("runtime-test-logical-devices 2 0,0 ok -")
    else
      rows+=("runtime-test-logical-devices 2 0,0 FAIL -")
    fi
    echo "${rows[-1]}"
  fi

  # The front end: models loaded with device_map=[0] * N.
  if [ -d "$ldev_dir/python" ] && echo python | grep -Eq -- "$pattern"; then
    python3 "$here/check_logical_devices.py" run "$ldev_dir/python" > "$logs/python.log" 2> "$logs/python.err"
    local python_status=$? python_rows=0
    while read -r line; do
      # shellcheck disable=SC2086
      set -- $line
      [ $# -eq 5 ] || continue
      total=$((total + 1)) python_rows=$((python_rows + 1))
      [ "$4" = ok ] && right=$((right + 1))
      rows+=("$line")
      echo "$line"
    done < "$logs/python.log"
    # A Python part that ran nothing (no PyTorch, say) is a failure too.
    if [ "$python_rows" -eq 0 ]; then
      total=$((total + 1))
      rows+=("python-models - - FAIL(status-$python_status) -")
      tail -3 "$logs/python.err"
    fi
  fi

  {
    printf '%-34s %7s %-16s %-9s %s\n' bundle devices map verdict max_rel_err
    for row in "${rows[@]}"; do
      # shellcheck disable=SC2086
      printf '%-34s %7s %-16s %-9s %s\n' $row
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
