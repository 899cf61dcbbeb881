#!/usr/bin/env bash
# Installs missing dependencies, builds processor, and runs the demo.
#
# Usage: bash scripts/demo.sh [demo args...]
#   BUILD_DIR   Default: build
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-build}"

# The program the demo runs, relative to the build directory.
demo_binary="examples/demo"

bash "${root}/scripts/build.sh" "${build_dir}" -DPROCESSOR_BUILD_EXAMPLES=ON

cd "${root}"
echo "demo: running ${build_dir}/${demo_binary}"
exec "${build_dir}/${demo_binary}" "$@"
