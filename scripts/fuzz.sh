#!/usr/bin/env bash
# Fuzzes the readers a bundle's bytes reach, and runs the runtime under
# AddressSanitizer and UndefinedBehaviorSanitizer (docs/testing.md,
# "Fuzzing"):
#   1. builds the runtime alone with clang 22, ASan, UBSan and libFuzzer
#      (EIN_FUZZ, CUDA off) in FUZZ_BUILD_DIR (build-fuzz; ctest's "fuzz"
#      uses BUILD-fuzz);
#   2. runs each libFuzzer harness (manifest, program, npy, topology,
#      signatures) for SECONDS from its seed corpus (runtime/fuzz/corpus,
#      copied: new inputs stay in the work directory);
#   3. runs the runtime unit tests sanitized;
#   4. with a main build given (BUILD, which has ein-compile): compiles CPU
#      bundles of the examples and runs them sanitized (--check --debug),
#      then the mutation campaign with the sanitized ein-run.
#   5. with --ir: builds the whole project instrumented with clang 22 for
#      libFuzzer and UBSan (EIN_FUZZ_IR, in FUZZ_IR_BUILD_DIR, build-fuzz-ir: long, a full
#      compile of the compiler's libraries) and runs tools/fuzz-ir (MLIR's
#      parser behind the input guard, then import and ein-plan on 2 devices)
#      for SECONDS from the test inputs and examples.
# Prints one line per stage and "N passed, N failed"; exits 1 on a failure.
#   scripts/fuzz.sh [--ir] [SECONDS] [BUILD]      # SECONDS=30 by default
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
ir=0
if [ "${1:-}" = "--ir" ]; then
  ir=1
  shift
fi
seconds=${1:-30}
main=${2:-}
build=$(realpath -m "${FUZZ_BUILD_DIR:-build-fuzz}")
cxx=${FUZZ_CXX:-clang++-22}
cc=${FUZZ_CC:-clang-22}

passed=0
failed=0
stage() { # NAME STATUS
  if [ "$2" -eq 0 ]; then
    echo "fuzz: $1: ok"
    passed=$((passed + 1))
  else
    echo "fuzz: $1: FAILED"
    failed=$((failed + 1))
  fi
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}

if ! command -v "$cxx" > /dev/null; then
  echo "fuzz: $cxx not found (scripts/setup.sh installs clang-22 and" \
    "libclang-rt-22-dev)"
  stage build 1
  finish
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S runtime -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$build/bin" \
    -DEIN_FUZZ=ON -DEIN_RUNTIME_CUDA=OFF > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; stage build 1; finish; }
fi
harnesses="manifest program npy topology signatures"
targets="ein-run ein-eval ein-runtime-tests"
for h in $harnesses; do targets="$targets fuzz-$h"; done
ninja -C "$build" $targets > "$build.log" 2>&1
status=$?
[ $status -eq 0 ] || tail -30 "$build.log"
stage "build (clang 22, ASan+UBSan, libFuzzer)" $status
[ $status -eq 0 ] || finish

work=$(mktemp -d /tmp/ein-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allow_user_segv_handler=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Runs the libFuzzer binary BINARY as NAME for SECONDS from SEEDS (read
# only: new inputs go to the work directory); a crashing input is copied to
# fuzz-artifacts/.
fuzz() { # NAME BINARY SEEDS MAX_LEN TIMEOUT
  mkdir -p "$work/$1" "$work/artifacts"
  "$2" -max_total_time="$seconds" -timeout="$5" -rss_limit_mb=4096 \
    -max_len="$4" -print_final_stats=1 -artifact_prefix="$work/artifacts/$1-" \
    "$work/$1" "$3" > "$work/$1.log" 2>&1
  local status=$?
  if [ $status -ne 0 ]; then
    tail -40 "$work/$1.log"
    mkdir -p fuzz-artifacts && cp "$work/artifacts/$1"-* fuzz-artifacts/ 2>/dev/null
  fi
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$1.log" |
    grep -o '[0-9]*$')
  stage "fuzz-$1 for ${seconds}s (${runs:-?} inputs)" $status
}
for h in $harnesses; do
  fuzz "$h" "$build/bin/fuzz-$h" "runtime/fuzz/corpus/$h" 65536 20
done

"$build/bin/ein-runtime-tests" > "$work/runtime-tests.log" 2>&1
status=$?
[ $status -eq 0 ] || tail -40 "$work/runtime-tests.log"
grep -E "^\[  PASSED|^\[  FAILED" "$work/runtime-tests.log" | sort -u
stage "ein-runtime-tests under ASan+UBSan" "$status"

if [ -n "$main" ]; then
  status=0
  for d in 1 3; do
    for f in mlp llama_block matrix_chain; do
      "$main/bin/ein-compile" "examples/$f.mlir" -o "$work/b/$f$d" \
        --devices=$d > /dev/null &&
        "$build/bin/ein-run" "$work/b/$f$d" --check --debug --seed=3 \
          > "$work/b-$f$d.log" 2>&1 ||
        { status=1; tail -20 "$work/b-$f$d.log"; }
    done
  done
  stage "CPU bundles (--check --debug) under ASan+UBSan" $status
  python3 scripts/mutate_bundles.py --bin "$build/bin" --each --random 100 \
    "$work"/b/*/ > "$work/mutations.log" 2>&1
  status=$?
  tail -3 "$work/mutations.log"
  stage "mutations under ASan+UBSan" $status
fi
if [ $ir -eq 1 ]; then
  irbuild=$(realpath -m "${FUZZ_IR_BUILD_DIR:-build-fuzz-ir}")
  if [ ! -f "$irbuild/build.ninja" ]; then
    cmake -G Ninja -S . -B "$irbuild" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
      -DEIN_FUZZ_IR=ON -DEIN_RUNTIME_CUDA=OFF > "$irbuild.configure.log" 2>&1
  fi
  ninja -C "$irbuild" fuzz-ir > "$irbuild.log" 2>&1
  status=$?
  [ $status -eq 0 ] || tail -30 "$irbuild.log"
  stage "build fuzz-ir (clang 22, whole project instrumented)" $status
  if [ $status -eq 0 ]; then
    mkdir -p "$work/ir-seeds"
    i=0
    # The known parser-crash inputs (test/Tools/Inputs) stay as seeds.
    for f in examples/*.mlir test/Pipelines/Inputs/*.mlir \
      test/Transforms/*.mlir test/Tools/Inputs/*.mlir; do
      cp "$f" "$work/ir-seeds/$i.mlir"
      i=$((i + 1))
    done
    fuzz ir "$irbuild/bin/fuzz-ir" "$work/ir-seeds" 32768 30
  fi
fi
finish
