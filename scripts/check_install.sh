#!/usr/bin/env bash
# Checks that an installed processor works for a consumer, the way a user would use it:
#   1. `cmake --install` the build into a fresh prefix;
#   2. a standalone CMake project (tests/install) finds it with find_package(processor CONFIG)
#      and links processor::processor;
#   3. the same program compiled with nothing but `pkg-config --cflags --libs processor`.
# Both programs must print "Current lag: 100" and then "seed parity OK".
#
# Usage: bash scripts/check_install.sh      (after scripts/build.sh)
#   BUILD_DIR   the build to install. Default: build
#   CXX         compiler for the pkg-config check. Default: c++
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

echo "check_install: find_package(processor CONFIG) consumer (tests/install)"
cmake -S tests/install -B "${work}/consumer" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="${prefix}" >"${work}/consumer-configure.log" ||
  { cat "${work}/consumer-configure.log" >&2; exit 1; }
cmake --build "${work}/consumer" -j "${JOBS:-2}"
"${work}/consumer/seed_parity" | tee "${work}/cmake-consumer.out"
expect_output "CMake consumer" "${work}/cmake-consumer.out"

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

echo "check_install: OK"
