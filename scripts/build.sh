#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds processor with Ninja.
#
# Usage: bash scripts/build.sh [build-dir] [extra cmake args...]
#   build-dir   Default: build (relative to the repository root)
#   JOBS        parallel build jobs. Default: 2
#   BUILD_TARGETS  the targets to build, space-separated (e.g. processor_unit_tests: the executables
#               of the unit tier). Default: all
#   SETUP_PROFILE  what scripts/setup.sh installs first: all (default) or library
#   e.g. bash scripts/build.sh build-debug -DCMAKE_BUILD_TYPE=Debug -DPROCESSOR_BUILD_BENCHMARKS=ON
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-build}"
shift $(($# > 0 ? 1 : 0))

bash "${root}/scripts/setup.sh" "${SETUP_PROFILE:-all}"

cd "${root}"
# The build type comes first so that an extra -DCMAKE_BUILD_TYPE=... overrides it.
cmake -S . -B "${build_dir}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
targets=()
for target in ${BUILD_TARGETS:-}; do targets+=(--target "${target}"); done
cmake --build "${build_dir}" -j "${JOBS:-2}" "${targets[@]}"
