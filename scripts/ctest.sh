#!/usr/bin/env bash
# Runs ctest on a build directory with the options every tier uses (--output-on-failure,
# --no-tests=error) and, when a test failed, prints scripts/failure_digest.py's digest after
# ctest's summary: each failed test's failure lines again, at the end of the log, where a
# truncated view of a long CI log still shows them.
#
# Usage: bash scripts/ctest.sh <build-dir> [ctest arguments...]   exits with ctest's status
set -uo pipefail
build_dir="$1"
shift
status=0
ctest --test-dir "${build_dir}" --output-on-failure --no-tests=error "$@" || status=$?
if ((status != 0)); then
  python3 "$(dirname "${BASH_SOURCE[0]}")/failure_digest.py" "${build_dir}" || true
fi
exit "${status}"
