#!/usr/bin/env bash
# The project's test command: installs missing dependencies, builds with tests, starts the
# services the tests need, runs every ctest tier (unit, integration, robustness), then checks
# that processor works for a consumer through find_package, pkg-config, add_subdirectory and
# FetchContent (scripts/check_install.sh).
#
# Usage: bash scripts/test.sh [extra cmake args...]
#   BUILD_DIR   Default: build
#   JOBS        parallel build jobs. Default: 2
#   TEST_JOBS   ctest's parallel slots. Default: twice JOBS. Most tests wait on the broker or a
#               group join; those that keep the cores busy take 2 slots (PROCESSORS in
#               tests/CMakeLists.txt).
#   TEST_BUILD_ONLY  1: build, then stop (.ci/run builds first, then starts its other builds
#               while the tests run).
# The build carries line tables only (PROCESSOR_LINE_TABLES): a failing test's stack trace keeps its
# files and lines, and the build takes about a quarter less; pass -DPROCESSOR_LINE_TABLES=OFF for
# full debug information.
# Exits non-zero when any step fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-2}"
test_jobs="${TEST_JOBS:-$((2 * jobs))}"
cd "${root}"

# ---- Services hook -------------------------------------------------------------------------
# Start here whatever the integration tier needs (e.g. a local Kafka broker started by a
# scripts/ helper) and export where to find it; stop it in stop_services. Both run once per
# test run; stop_services runs on every exit, also after a failure or Ctrl-C.
start_services() {
  # A real single-node Kafka broker (KRaft) on 127.0.0.1 for the integration tier. The tests
  # find it through KAFKA_BOOTSTRAP and the Kafka tools through KAFKA_BROKER_SCRIPT.
  KAFKA_BOOTSTRAP="$(bash scripts/kafka/broker.sh start --dir "${build_dir}/kafka")"
  export KAFKA_BOOTSTRAP
  export KAFKA_BROKER_SCRIPT="${root}/scripts/kafka/broker.sh"
  echo "test: Kafka broker at ${KAFKA_BOOTSTRAP}"
  # A secured one beside it (SASL_SSL, OAUTHBEARER, TLS, ACLs: broker.sh start --secure), for the
  # tests of secured clusters; they find it, its client files and passwords through
  # KAFKA_SECURE_DIR.
  bash scripts/kafka/broker.sh start --secure --dir "${build_dir}/kafka-secure" >/dev/null
  export KAFKA_SECURE_DIR="${root}/${build_dir}/kafka-secure"
  [[ "${build_dir}" == /* ]] && KAFKA_SECURE_DIR="${build_dir}/kafka-secure"
  echo "test: secured Kafka broker in ${KAFKA_SECURE_DIR}"
}
stop_services() {
  # Must not fail: it runs from the EXIT trap.
  bash scripts/kafka/broker.sh stop --dir "${build_dir}/kafka" || true
  bash scripts/kafka/broker.sh stop --dir "${build_dir}/kafka-secure" || true
}
# ---------------------------------------------------------------------------------------------

JOBS="${jobs}" bash scripts/build.sh "${build_dir}" -DPROCESSOR_BUILD_TESTS=ON -DPROCESSOR_LINE_TABLES=ON "$@"
[[ "${TEST_BUILD_ONLY:-0}" == 1 ]] && exit 0

trap stop_services EXIT
start_services

bash scripts/ctest.sh "${build_dir}" -j "${test_jobs}"

BUILD_DIR="${build_dir}" bash scripts/check_install.sh
