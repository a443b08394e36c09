#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), generates the docs from ODS, and runs
# every test through ctest: lit (FileCheck, -verify-diagnostics, the no-crash
# fuzz), the gtest unit tests and the clang-format check. ctest's summary line
# closes the output.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/setup.sh
ninja -C "$BUILD_DIR" ein-docs
ctest --test-dir "$BUILD_DIR" --output-on-failure
