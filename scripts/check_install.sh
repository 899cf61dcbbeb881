#!/usr/bin/env bash
# Checks that processor works for a consumer in each way a user would take it, every consumer
# building tests/install/seed_parity.cpp:
#   1. find_package: `cmake --install` the build into a fresh prefix, then a standalone CMake
#      project (tests/install/find_package) finds it with find_package(processor CONFIG) and
#      links processor::processor;
#   2. pkg-config: the same program compiled with nothing but
#      `pkg-config --cflags --libs processor`;
#   3. add_subdirectory: a project (tests/install/add_subdirectory) that adds this source tree
#      to its own build;
#   4. FetchContent: a project (tests/install/fetchcontent) that declares this source tree with
#      FetchContent_Declare(SOURCE_DIR) and FetchContent_MakeAvailable.
# Every program must print "Current lag: 100" and then "seed parity OK". The first also compiles
# README's quickstart and, when a broker runs (KAFKA_BOOTSTRAP, KAFKA_BROKER_SCRIPT), runs it. In 3 and 4 processor is
# a subproject, so it must bring its library only: the consumer's build holds no executable but
# seed_parity (none of processor's tests or examples), and compiles processor without -Werror.
# 4 compiles the library (about 1.5 minutes on 2 cores) and runs its seed_parity. 3 is checked
# up to its build graph, not compiled: FetchContent_MakeAvailable is add_subdirectory, so its
# compile commands are 4's (but for the precompiled headers, which 3 leaves off and 4 turns on;
# CI's Release build compiles every source without them). CHECK_INSTALL_BUILD_ALL=1 compiles 3 too.
#
# Usage: bash scripts/check_install.sh      (after scripts/build.sh)
#   BUILD_DIR   the build to install. Default: build
#   CXX         compiler for the pkg-config check. Default: c++
#   JOBS        parallel build jobs. Default: 2
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
build_dir="${BUILD_DIR:-build}"
if [[ ! -f "${build_dir}/CMakeCache.txt" ]]; then
  echo "check_install: ${build_dir} is not a configured build; run scripts/build.sh first" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/processor-install-check.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
prefix="${work}/prefix"

# expect_output <program-description> <output-file>: the seed line, then the parity line.
expect_output() {
  local what="$1" output="$2"
  if ! awk '
      !seen_lag && /^Current lag:/ { if ($0 != "Current lag: 100") exit 1; seen_lag = 1; next }
      seen_lag && $0 == "seed parity OK" { ok = 1 }
      END { exit ok ? 0 : 1 }' "${output}"; then
    echo "check_install: FAILED: ${what} did not print 'Current lag: 100' then 'seed parity OK':" >&2
    cat "${output}" >&2
    exit 1
  fi
  echo "check_install: ${what}: OK"
}

echo "check_install: installing ${build_dir} into ${prefix}"
cmake --install "${build_dir}" --prefix "${prefix}" >"${work}/install.log" ||
  { cat "${work}/install.log" >&2; exit 1; }

# The README's quickstart: the first C++ block after its "## Quickstart" heading.
awk '/^## Quickstart/ { section = 1; next }
     section && /^```cpp$/ { code = 1; next }
     code && /^```$/ { exit }
     code { print }' README.md >"${work}/quickstart.cpp"
if [[ ! -s "${work}/quickstart.cpp" ]]; then
  echo "check_install: FAILED: README.md has no C++ block under '## Quickstart'" >&2
  exit 1
fi

echo "check_install: find_package(processor CONFIG) consumer (tests/install/find_package), with README's quickstart"
cmake -S tests/install/find_package -B "${work}/find_package" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="${prefix}" -DQUICKSTART_SOURCE="${work}/quickstart.cpp" >"${work}/find_package-configure.log" ||
  { cat "${work}/find_package-configure.log" >&2; exit 1; }
cmake --build "${work}/find_package" -j "${JOBS:-2}"
"${work}/find_package/seed_parity" | tee "${work}/find_package.out"
expect_output "find_package consumer" "${work}/find_package.out"

# The quickstart against the test broker (scripts/test.sh starts it): ten records in a new topic,
# consumed and committed to the group, which Kafka's own kafka-consumer-groups then shows.
if [[ -n "${KAFKA_BOOTSTRAP:-}" && -n "${KAFKA_BROKER_SCRIPT:-}" ]]; then
  topic="quickstart-$$-${RANDOM}"
  echo "check_install: running README's quickstart against ${KAFKA_BOOTSTRAP} (topic ${topic})"
  bash "${KAFKA_BROKER_SCRIPT}" tool topics --bootstrap-server "${KAFKA_BOOTSTRAP}" --create --topic "${topic}" \
    --partitions 1 --replication-factor 1 >/dev/null
  seq 1 10 | sed 's/^/event-/' |
    bash "${KAFKA_BROKER_SCRIPT}" tool console-producer --bootstrap-server "${KAFKA_BOOTSTRAP}" --topic "${topic}" \
      >/dev/null
  timeout 120 "${work}/find_package/quickstart" "${KAFKA_BOOTSTRAP}" "${topic}" | tee "${work}/quickstart.out"
  if [[ "$(grep -c ': event-' "${work}/quickstart.out")" != 10 ]] ||
    ! grep -qx 'lag of partition 0: 0' "${work}/quickstart.out"; then
    echo "check_install: FAILED: the quickstart did not print ten events and 'lag of partition 0: 0'" >&2
    exit 1
  fi
  # GROUP TOPIC PARTITION CURRENT-OFFSET ...: the group's committed offset is the log end, 10.
  committed="$(bash "${KAFKA_BROKER_SCRIPT}" tool consumer-groups --bootstrap-server "${KAFKA_BOOTSTRAP}" \
    --describe --group quickstart 2>/dev/null | awk -v topic="${topic}" '$2 == topic && $3 == 0 { print $4 }')"
  if [[ "${committed}" != 10 ]]; then
    echo "check_install: FAILED: kafka-consumer-groups shows offset '${committed}' for ${topic}:0, not 10" >&2
    exit 1
  fi
  echo "check_install: README's quickstart: OK (kafka-consumer-groups shows offset 10)"
else
  echo "check_install: README's quickstart compiles; not run (KAFKA_BOOTSTRAP is not set)"
fi

echo "check_install: pkg-config consumer"
pc_file="$(find "${prefix}" -name processor.pc -print -quit)"
if [[ -z "${pc_file}" ]]; then
  echo "check_install: FAILED: no processor.pc under ${prefix}" >&2
  exit 1
fi
PKG_CONFIG_PATH="$(dirname "${pc_file}")"
export PKG_CONFIG_PATH
# processor.pc names RocksDB and librdkafka as public requirements (the library is an archive),
# so a plain --libs links everything a consumer needs.
pc_cflags="$(pkg-config --cflags processor)"
pc_libs="$(pkg-config --libs processor)"
read -r -a cflags <<<"${pc_cflags}"
read -r -a libs <<<"${pc_libs}"
echo "check_install: pkg-config gives ${cflags[*]} ${libs[*]}"
"${CXX:-c++}" -o "${work}/seed_parity_pc" tests/install/seed_parity.cpp "${cflags[@]}" "${libs[@]}"
"${work}/seed_parity_pc" | tee "${work}/pkg-config-consumer.out"
expect_output "pkg-config consumer" "${work}/pkg-config-consumer.out"

# subproject_consumer <name> <description> <build|graph>: configures tests/install/<name>, a
# project that builds processor from this source tree as a subproject, and checks that processor
# brings its library only; with `build`, also builds it and runs its seed_parity.
subproject_consumer() {
  local name="$1" what="$2" mode="$3"
  local dir="${work}/${name}" started=${SECONDS}
  echo "check_install: ${what} consumer (tests/install/${name})"
  cmake -S "tests/install/${name}" -B "${dir}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    >"${dir}-configure.log" 2>&1 || { cat "${dir}-configure.log" >&2; exit 1; }
  [[ "${CHECK_INSTALL_BUILD_ALL:-0}" == 1 ]] && mode=build
  if [[ "${mode}" == build ]]; then
    cmake --build "${dir}" -j "${JOBS:-2}" >"${dir}-build.log" 2>&1 ||
      { cat "${dir}-build.log" >&2; exit 1; }
    echo "check_install: ${what} consumer built in $((SECONDS - started)) s"
  fi

  # Every executable the consumer's default build links, from Ninja's rule names
  # (CXX_EXECUTABLE_LINKER__<target>_<config>).
  local executables
  executables="$(ninja -C "${dir}" -t targets all |
    sed -n 's/^[^:]*: CXX_EXECUTABLE_LINKER__\(.*\)_[^_]*$/\1/p' | sort -u | paste -sd ' ')"
  if [[ "${executables}" != "seed_parity" ]]; then
    echo "check_install: FAILED: ${what} consumer builds executables of processor's: ${executables}" >&2
    exit 1
  fi
  local library_commands
  library_commands="$(ninja -C "${dir}" -t commands processor)"
  if [[ "${library_commands}" != *offset_manager.cpp* ]]; then
    echo "check_install: FAILED: ${what} consumer: no compile command for processor's sources" >&2
    exit 1
  fi
  if grep -q -- ' -Werror' <<<"${library_commands}"; then
    echo "check_install: FAILED: ${what} consumer compiles processor with -Werror:" >&2
    grep -m 1 -- ' -Werror' <<<"${library_commands}" >&2
    exit 1
  fi
  echo "check_install: ${what} consumer: processor's library only (no tests, examples or -Werror)"

  if [[ "${mode}" == graph ]]; then
    echo "check_install: ${what} consumer: build graph checked, not compiled (FetchContent's build compiles the same)"
    return
  fi
  "${dir}/seed_parity" | tee "${dir}.out"
  expect_output "${what} consumer" "${dir}.out"
}

subproject_consumer add_subdirectory add_subdirectory graph
subproject_consumer fetchcontent FetchContent build

echo "check_install: OK"
