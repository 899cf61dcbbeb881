#!/usr/bin/env bash
# Installs what the library needs, builds the library and the demo program only, and runs the
# demo: no test, tool or benchmark is compiled and none of their dependencies is installed
# (scripts/test.sh installs and builds those).
#
# Usage: bash scripts/demo.sh [demo args...]
#   BUILD_DIR   Default: build-demo (its own, so that it leaves the test build alone)
#   JOBS        parallel build jobs. Default: 2
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-build-demo}"
cd "${root}"
started="${SECONDS}"

echo "demo: installing what the library needs, if anything is missing (scripts/setup.sh library)"
bash scripts/setup.sh library

echo "demo: configuring ${build_dir}: the library and the demo, no tests, tools or benchmarks"
mkdir -p "${build_dir}"
cmake -S . -B "${build_dir}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROCESSOR_LINE_TABLES=ON \
  -DPROCESSOR_BUILD_TESTS=OFF -DPROCESSOR_BUILD_TOOLS=OFF -DPROCESSOR_BUILD_BENCHMARKS=OFF \
  -DPROCESSOR_BUILD_EXAMPLES=ON >"${build_dir}/configure.log" 2>&1 ||
  { cat "${build_dir}/configure.log" >&2; exit 1; }

echo "demo: building the library and the demo on ${JOBS:-2} jobs (about a minute on 2 cores the first time)"
cmake --build "${build_dir}" -j "${JOBS:-2}" --target demo

echo "demo: built in $((SECONDS - started)) s; running ${build_dir}/examples/demo"
exec "${build_dir}/examples/demo" "$@"
