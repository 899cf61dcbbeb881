#!/usr/bin/env bash
# Builds the Google Benchmark binaries (Release, in build-bench/) and runs them all, then prints
# one table of medians, anchors, ratios and targets collected from the binaries' RESULT lines.
#
# Usage: bash scripts/bench.sh [--smoke] [--only B1,B2] [--e2e-messages N] [extra Google Benchmark flags...]
#   --smoke             every benchmark once with a minimal iteration count and a small e2e
#                       message count: for CI, so that the benchmarks cannot rot. bench_e2e runs
#                       2 repetitions, then the repetition check: 3 repetitions whose first setups
#                       fail (--e2e-fail-first-setup) must be reported as failures, not abort the
#                       binary. Fails only when a binary or that check fails, never because a
#                       target is missed.
#   --only B1,B2        only these binaries (e.g. --only bench_parallel: the side-by-side with
#                       Confluent's Parallel Consumer alone; its markdown table is written to
#                       the run's log directory as bench_parallel.md).
#   --e2e-messages N    messages per end-to-end run (default 10000000; 20000 with --smoke).
#                       The mock cluster keeps ~1M of them (5 MiB per partition) and consumes
#                       those; the real broker consumes all. Env: BENCH_E2E_MESSAGES.
#   REPETITIONS         repetitions of each benchmark in the full run (default 5): medians.
#   MIN_TIME            --benchmark_min_time of the full run in seconds (default 0.5).
#   BUILD_DIR           default build-bench;  JOBS  parallel build jobs (default 2).
#   KAFKA_BOOTSTRAP     the broker for the end-to-end measures. Unset, the full run starts its own
#                       (scripts/kafka/broker.sh, in BUILD_DIR/kafka) and stops it at exit; the
#                       smoke run uses the mock cluster only, except bench_streams (exactly-once
#                       side by side with Kafka Streams, bench/kafka-streams-peer) and
#                       bench_parallel (side by side with Confluent's Parallel Consumer,
#                       bench/parallel-consumer-peer), which always need a real broker: the smoke
#                       run starts one for them (STREAMS_BOOTSTRAP names an existing one).
#                       BENCH_NO_BROKER=1: mock only, neither of those two.
#
# Exit status: non-zero when setup, the build, or a benchmark binary fails (or times out), or when
# the smoke run's repetition check fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
smoke=0
only=""
e2e_messages="${BENCH_E2E_MESSAGES:-}"
extra=()
while (($# > 0)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --e2e-messages) e2e_messages="${2:?--e2e-messages needs a count}"; shift ;;
    --e2e-messages=*) e2e_messages="${1#--e2e-messages=}" ;;
    --only) only="${2:?--only needs binary names}"; shift ;;
    --only=*) only="${1#--only=}" ;;
    -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) extra+=("$1") ;;
  esac
  shift
done

build_dir="${BUILD_DIR:-build-bench}"
[[ "${build_dir}" == /* ]] || build_dir="${root}/${build_dir}"
started=$(date +%s)

bash "${root}/scripts/setup.sh"

cmake -S "${root}" -B "${build_dir}" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROCESSOR_BUILD_BENCHMARKS=ON \
  -DPROCESSOR_BUILD_TESTS=OFF -DPROCESSOR_BUILD_EXAMPLES=OFF >/dev/null
binaries=(bench_hot_path bench_commit bench_e2e bench_streams bench_monitor bench_exporter bench_parallel)
if [[ -n "${only}" ]]; then
  IFS=',' read -r -a binaries <<<"${only}"
fi
selected() { [[ " ${binaries[*]} " == *" $1 "* ]]; }
cmake --build "${build_dir}" -j "${JOBS:-2}" --target "${binaries[@]}"
# bench_streams runs Kafka Streams side by side (bench/kafka-streams-peer, built by Maven with the
# broker's Kafka version); its build prints the command line that runs it.
if selected bench_streams; then
  PROCESSOR_STREAMS_PEER="$(bash "${root}/bench/kafka-streams-peer/build.sh" | tail -n 1)"
  export PROCESSOR_STREAMS_PEER
fi
# bench_parallel runs Confluent's Parallel Consumer side by side (bench/parallel-consumer-peer).
# Without Maven or its jars, bench_parallel measures ours alone and says so.
if selected bench_parallel; then
  if PROCESSOR_PARALLEL_PEER="$(bash "${root}/bench/parallel-consumer-peer/build.sh" | tail -n 1)"; then
    export PROCESSOR_PARALLEL_PEER
  else
    echo "bench.sh: the Parallel Consumer peer could not be built (above): bench_parallel measures ours alone"
    unset PROCESSOR_PARALLEL_PEER
  fi
fi
built=$(date +%s)

if ((smoke)); then
  mode="smoke"
  gbench=(--benchmark_min_time=0.01 --benchmark_repetitions=1)
  e2e_messages="${e2e_messages:-20000}"
  per_binary_timeout=240
  # bench_streams and bench_parallel need a real broker even here (Kafka Streams, transactions
  # and the Java peers have no mock); the other binaries keep the mock cluster, so the broker's
  # address goes to those two alone.
  STREAMS_BOOTSTRAP="${STREAMS_BOOTSTRAP:-}"
  if [[ -z "${STREAMS_BOOTSTRAP}" && "${BENCH_NO_BROKER:-0}" != 1 ]] && { selected bench_streams || selected bench_parallel; }; then
    STREAMS_BOOTSTRAP="$(bash "${root}/scripts/kafka/broker.sh" start --dir "${build_dir}/kafka")"
    trap 'bash "${root}/scripts/kafka/broker.sh" stop --dir "${build_dir}/kafka" || true' EXIT
    echo "bench.sh: Kafka broker for bench_streams and bench_parallel at ${STREAMS_BOOTSTRAP}"
  fi
else
  mode="full"
  gbench=(--benchmark_min_time="${MIN_TIME:-0.5}" --benchmark_repetitions="${REPETITIONS:-5}"
          --benchmark_report_aggregates_only=true)
  e2e_messages="${e2e_messages:-10000000}"
  per_binary_timeout=3600
  if [[ -z "${KAFKA_BOOTSTRAP:-}" && "${BENCH_NO_BROKER:-0}" != 1 ]]; then
    # The end-to-end and commit round-trip measures against a real single-node broker (KRaft).
    KAFKA_BOOTSTRAP="$(bash "${root}/scripts/kafka/broker.sh" start --dir "${build_dir}/kafka")"
    export KAFKA_BOOTSTRAP
    trap 'bash "${root}/scripts/kafka/broker.sh" stop --dir "${build_dir}/kafka" || true' EXIT
    echo "bench.sh: Kafka broker at ${KAFKA_BOOTSTRAP}"
  fi
  STREAMS_BOOTSTRAP="${KAFKA_BOOTSTRAP:-}"
fi
gbench+=(--benchmark_color=false)

log_dir="${build_dir}/bench-logs/$(date -u +%Y%m%dT%H%M%SZ)-${mode}"
mkdir -p "${log_dir}"
machine="$(hostname), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(uname -sr), $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "bench.sh: ${mode} run on ${machine}"
echo "bench.sh: logs in ${log_dir}"
echo "bench.sh: (Google Benchmark's 'Library was built as DEBUG' warning is about Debian's libbenchmark itself;"
echo "           the code measured is this project's Release build)"

failed=()
for binary in "${binaries[@]}"; do
  args=("${gbench[@]}")
  [[ "${binary}" == bench_e2e ]] && args=(--e2e-messages "${e2e_messages}" "${args[@]}")
  run_env=()
  if [[ "${binary}" == bench_streams || "${binary}" == bench_parallel ]]; then
    # Not Google Benchmark binaries: their own sizes and repetitions (see their headers).
    args=()
    ((smoke)) && args=(--smoke)
    [[ "${binary}" == bench_parallel ]] && ((!smoke)) && args=(--markdown "${log_dir}/bench_parallel.md")
    if [[ -z "${STREAMS_BOOTSTRAP}" ]]; then
      echo "bench.sh: ${binary} skipped: it needs a real broker (BENCH_NO_BROKER=1)"
      continue
    fi
    run_env=(env "KAFKA_BOOTSTRAP=${STREAMS_BOOTSTRAP}")
  fi
  # Repetitions of bench_e2e in the smoke run too: its aggregates once aborted the binary.
  ((smoke)) && [[ "${binary}" == bench_e2e ]] && args+=(--benchmark_repetitions=2)
  echo
  echo "================ ${binary} ${args[*]:-} ${extra[*]:-}"
  binary_started=$(date +%s)
  set +e
  [[ "${binary}" == bench_streams || "${binary}" == bench_parallel ]] || args+=("${extra[@]}")
  timeout --kill-after=30 "${per_binary_timeout}" "${run_env[@]}" "${build_dir}/bench/${binary}" "${args[@]}" 2>&1 |
    tee "${log_dir}/${binary}.log"
  status=${PIPESTATUS[0]}
  set -e
  echo "bench.sh: ${binary} exited with ${status} after $(($(date +%s) - binary_started)) s"
  if ((status != 0)); then failed+=("${binary} (exit ${status})"); fi
done

# The repetition check (smoke): bench_e2e on the mock cluster, 3 repetitions, the first setup of
# each benchmark failing. It must report every failure and finish with its summary (exit 1), not
# abort: with Google Benchmark 1.7.1 one repetition failing in its setup while two others
# succeeded aborted the binary in ComputeStats ("Check (run_iterations) == (run.iterations)").
if ((smoke)) && selected bench_e2e; then
  check_log="${log_dir}/bench_e2e-repetition-check.log"
  check_args=(--e2e-messages "${e2e_messages}" --e2e-fail-first-setup --benchmark_min_time=0.01
              --benchmark_repetitions=3 --benchmark_color=false)
  echo
  echo "================ repetition check: bench_e2e ${check_args[*]} (mock cluster; must exit 1, not abort)"
  check_started=$(date +%s)
  set +e
  env -u KAFKA_BOOTSTRAP timeout --kill-after=30 240 "${build_dir}/bench/bench_e2e" "${check_args[@]}" \
    >"${check_log}" 2>&1
  status=$?
  set -e
  problems=""
  ((status == 1)) || problems+="exit ${status}, expected 1; "
  for benchmark in BM_E2E/mock BM_CommitRoundTrip/mock; do
    grep -q "^bench_e2e: FAILED ${benchmark}: injected failure" "${check_log}" ||
      problems+="no injected failure reported for ${benchmark}; "
  done
  grep -q '^RESULT|commit round trip, 4 partitions, sync, mock cluster|' "${check_log}" ||
    problems+="no summary; "
  if [[ -n "${problems}" ]]; then
    tail -n 40 "${check_log}"
    failed+=("repetition check (${problems}log ${check_log})")
    echo "bench.sh: repetition check FAILED after $(($(date +%s) - check_started)) s: ${problems%; }"
  else
    grep '^bench_e2e: FAILED' "${check_log}" | sed 's/^/  reported: /'
    echo "bench.sh: repetition check passed after $(($(date +%s) - check_started)) s (failures reported, no abort)"
  fi
fi
finished=$(date +%s)

# The final table, from every binary's RESULT|measure|ours|anchor|ratio|target|met lines.
summary="${log_dir}/summary.txt"
results() {
  for binary in "${binaries[@]}"; do
    if [[ -f "${log_dir}/${binary}.log" ]]; then grep '^RESULT|' "${log_dir}/${binary}.log" || true; fi
  done
}
{
  echo
  echo "==== processor benchmarks (${mode}): medians and ratios, each measure with its anchor in the same run ===="
  echo "machine: ${machine}"
  e2e_flags=""
  ((smoke)) && e2e_flags=" (bench_e2e: --benchmark_repetitions=2)"
  echo "e2e messages per run: ${e2e_messages}; Google Benchmark flags: ${gbench[*]}${e2e_flags}"
  echo
  results | awk -F'|' '
    { rows[NR] = $0; for (i = 2; i <= 7; i++) if (length($i) > w[i]) w[i] = length($i) }
    END {
      split("measure|ours (median)|anchor (median)|ratio|target|met?", head, "|")
      for (i = 2; i <= 7; i++) if (length(head[i - 1]) > w[i]) w[i] = length(head[i - 1])
      line = ""
      for (i = 2; i <= 7; i++) line = line sprintf("%-" w[i] "s", head[i - 1]) (i < 7 ? " | " : "")
      print line
      sep = ""
      for (i = 2; i <= 7; i++) { s = sprintf("%" w[i] "s", ""); gsub(/ /, "-", s); sep = sep s (i < 7 ? "-|-" : "") }
      print sep
      for (r = 1; r <= NR; r++) {
        n = split(rows[r], f, "|"); line = ""
        for (i = 2; i <= 7; i++) line = line sprintf("%-" w[i] "s", f[i]) (i < 7 ? " | " : "")
        print line
      }
    }'
  missed=$(results | awk -F'|' '$7 == "NO"' | wc -l)
  echo
  echo "targets missed: ${missed} (reported, not a failure)"
  echo "time: setup+build $((built - started)) s, benchmarks $((finished - built)) s, total $((finished - started)) s"
} | tee "${summary}"

if ((${#failed[@]} > 0)); then
  echo "bench.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
if ((smoke)) && selected bench_e2e; then
  echo "bench.sh: ${mode} run passed (${#binaries[@]} binaries and the repetition check)"
else
  echo "bench.sh: ${mode} run passed (${#binaries[@]} binaries)"
fi
