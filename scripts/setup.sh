#!/usr/bin/env bash
# Installs what the build needs (Debian 12: LLVM/MLIR 22, CMake, Ninja,
# GoogleTest, nlohmann-json, numpy, PyTorch and torchvision for the Python
# front end and its tests,
# Graphviz for drawn plans, clang-format 22, clang 22 with its sanitizer and
# libFuzzer runtimes for scripts/fuzz.sh, Open MPI for runs of several
# ranks: the runtime dlopens its libmpi) when it is missing, then
# configures and builds every tool into build/bin.
#   scripts/setup.sh            # BUILD_DIR=build by default
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
LLVM=/usr/lib/llvm-22

PACKAGES="llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-format-22
  cmake ninja-build g++ libgtest-dev nlohmann-json3-dev python3-numpy
  python3-torch python3-torchvision graphviz clang-22 libclang-rt-22-dev
  openmpi-bin"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DMLIR_DIR=$LLVM/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$LLVM/bin/lit
fi
ninja -C "$BUILD_DIR"
