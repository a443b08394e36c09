#!/usr/bin/env bash
# The package test (ctest -R package): installs this build into a prefix in
# the build tree, builds the out-of-tree consumer (consumer/) against it with
# find_package(Einsummable), and checks that its consumer-opt, and the
# installed ein-opt, import a linalg matmul into ein. Any failing step fails
# the test.
#   run.sh BUILD_DIR WORK_DIR MLIR_DIR CMAKE NINJA CXX FILECHECK
set -euo pipefail
[ $# -eq 7 ] || { echo "usage: $0 BUILD_DIR WORK_DIR MLIR_DIR CMAKE NINJA CXX FILECHECK" >&2; exit 2; }
build=$1 work=$2 mlir_dir=$3 cmake=$4 ninja=$5 cxx=$6 filecheck=$7
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix
input=$here/consumer/matmul.mlir

echo "== install $build into $prefix"
rm -rf "$prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; exit 1; }
config=$prefix/lib/cmake/einsummable/EinsummableConfig.cmake
[ -f "$config" ] || { echo "error: no $config" >&2; exit 1; }

# The consumer's build directory is kept between runs: it rebuilds what the
# new install changed.
echo "== configure and build the consumer"
"$cmake" -G Ninja -S "$here/consumer" -B "$work/consumer" \
  -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release -DMLIR_DIR="$mlir_dir" \
  -DEinsummable_DIR="$prefix/lib/cmake/einsummable"
"$cmake" --build "$work/consumer" -j 1

echo "== consumer-opt --ein-import"
"$work/consumer/consumer-opt" --ein-import "$input" | "$filecheck" "$input"
echo "== installed ein-opt --ein-import"
"$prefix/bin/ein-opt" --ein-import "$input" | "$filecheck" "$input"
echo "package: ok"
