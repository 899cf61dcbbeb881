#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang-14, ASan and UBSan (build-fuzz), and
# runs each for a bounded time over a copy of its committed corpus and its regressions.
#
# Usage: bash scripts/fuzz.sh [--time SECONDS] [--build-only] [TARGET...]
#   --time SECONDS  how long each target runs (libFuzzer's -max_total_time). Default: 60
#   --build-only    build the targets and stop (.ci/run builds them ahead of its fuzz stage)
#   TARGET          fuzz_stored_offset fuzz_checkpoint_record fuzz_ack_metadata fuzz_ack_reference fuzz_encoding
#                   fuzz_changelog_record fuzz_offsets_csv fuzz_offsetctl_args fuzz_java_client_config
#                   fuzz_web_config.
#                   Default: all of them
#   FUZZ_PARALLEL   targets run at once. Default: 2 (one per core of the CI box)
#   FUZZ_BUILD_DIR  Default: build-fuzz
#   JOBS            parallel build jobs. Default: 2
#
# The committed corpus (tests/fuzz/corpus/) is never modified: each run starts from a fresh copy
# in build-fuzz/corpus/<target>/, where libFuzzer adds what it finds. Prints per target the
# executions, exec/s and coverage (cov: edges, ft: features) of libFuzzer's final stats.
# Exits non-zero when a target crashes, leaks, times out or violates its contract; the input is
# in build-fuzz/artifacts/<target>/: commit it under tests/fuzz/regressions/<target>/
# (tests/fuzz/README.md says how).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

all_targets=(fuzz_stored_offset fuzz_checkpoint_record fuzz_ack_metadata fuzz_ack_reference fuzz_encoding fuzz_changelog_record
  fuzz_offsets_csv fuzz_offsetctl_args fuzz_java_client_config fuzz_web_config)
seconds=60
build_only=0
targets=()
while (($# > 0)); do
  case "$1" in
    --time)
      seconds="${2:?--time needs a number of seconds}"
      shift 2
      ;;
    --build-only)
      build_only=1
      shift
      ;;
    -h | --help)
      sed -n '2,20p' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *)
      if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
        echo "fuzz: unknown target '$1' (targets: ${all_targets[*]})" >&2
        exit 2
      fi
      targets+=("$1")
      shift
      ;;
  esac
done
if ! [[ "${seconds}" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: --time takes a positive number of seconds, got '${seconds}'" >&2
  exit 2
fi
((${#targets[@]} > 0)) || targets=("${all_targets[@]}")
parallel="${FUZZ_PARALLEL:-2}"
build_dir="${FUZZ_BUILD_DIR:-build-fuzz}"

# -O1 -gline-tables-only, as OSS-Fuzz builds: optimised enough to fuzz, line numbers in crash
# reports, and a shorter build than -O2 -g. Without NDEBUG: the library's asserts are checks too.
CC=clang-14 CXX=clang++-14 bash scripts/build.sh "${build_dir}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DPROCESSOR_BUILD_FUZZERS=ON \
  -DPROCESSOR_SANITIZE=address,undefined \
  -DPROCESSOR_WERROR=OFF \
  -DPROCESSOR_BUILD_TESTS=OFF \
  -DPROCESSOR_BUILD_EXAMPLES=OFF \
  -DPROCESSOR_BUILD_BENCHMARKS=OFF \
  -DPROCESSOR_INSTALL=OFF
((build_only)) && exit 0

# The longest input worth trying: a checkpoint record lists many partitions; the other formats
# are small (commit metadata is at most a few KiB).
max_len() {
  case "$1" in
    fuzz_checkpoint_record) echo 65536 ;;
    fuzz_encoding) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

# run_target <target>: one bounded run; its exit status is libFuzzer's.
run_target() {
  local target="$1"
  local corpus="${build_dir}/corpus/${target}"
  local artifacts="${build_dir}/artifacts/${target}"
  rm -rf "${corpus}" "${artifacts}"
  mkdir -p "${corpus}" "${artifacts}" "${build_dir}/logs"
  cp -R "tests/fuzz/corpus/${target}/." "${corpus}/"
  local inputs=("${corpus}")
  [[ -d "tests/fuzz/regressions/${target}" ]] && inputs+=("tests/fuzz/regressions/${target}")
  # New inputs go to the first directory only: the copy.
  "${build_dir}/tests/fuzz/${target}" \
    -max_total_time="${seconds}" \
    -print_final_stats=1 \
    -rss_limit_mb=2048 \
    -timeout=30 \
    -max_len="$(max_len "${target}")" \
    -artifact_prefix="${artifacts}/" \
    "${inputs[@]}" >"${build_dir}/logs/${target}.log" 2>&1
}

# final_stat <log> <name>: a value of libFuzzer's final stats.
final_stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -n 1; }

failed=()
for ((i = 0; i < ${#targets[@]}; i += parallel)); do
  batch=("${targets[@]:i:parallel}")
  pids=()
  echo "fuzz: running ${batch[*]} for ${seconds}s each"
  for target in "${batch[@]}"; do
    run_target "${target}" &
    pids+=($!)
  done
  for j in "${!batch[@]}"; do
    if ! wait "${pids[j]}"; then failed+=("${batch[j]}"); fi
  done
done

echo
printf '%-24s %12s %8s %7s %7s %7s  %s\n' target executions exec/s cov ft corpus result
for target in "${targets[@]}"; do
  log="${build_dir}/logs/${target}.log"
  # The last status line: "#N DONE cov: C ft: F corp: U/Sb ..." (or the line before a crash).
  status="$(grep -E '^#[0-9]+.*cov: [0-9]+' "${log}" | tail -n 1 || true)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"${status}")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"${status}")"
  corp="$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"${status}")"
  result=ok
  [[ " ${failed[*]} " == *" ${target} "* ]] && result=FAILED
  printf '%-24s %12s %8s %7s %7s %7s  %s\n' "${target}" "$(final_stat "${log}" number_of_executed_units)" \
    "$(final_stat "${log}" average_exec_per_sec)" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${result}"
done

if ((${#failed[@]} > 0)); then
  for target in "${failed[@]}"; do
    log="${build_dir}/logs/${target}.log"
    echo
    echo "fuzz: ${target} FAILED; the end of ${log}:"
    grep -E 'fuzz contract violation|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' "${log}" | head -n 5 || true
    tail -n 25 "${log}"
    for artifact in "${build_dir}/artifacts/${target}"/*; do
      [[ -e "${artifact}" ]] || continue
      echo "fuzz: artifact ${artifact}"
      echo "      minimise: ${build_dir}/tests/fuzz/${target} -minimize_crash=1 -runs=10000 -artifact_prefix=${build_dir}/artifacts/${target}/minimized- ${artifact}"
      echo "      then commit it as tests/fuzz/regressions/${target}/<what-broke> (tests/fuzz/README.md)"
    done
  done
  exit 1
fi
echo "fuzz: no crash or contract violation in ${targets[*]} (${seconds}s each)"
