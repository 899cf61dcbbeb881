#!/usr/bin/env bash
# Installs everything needed to build, test and run processor on Debian 12 (bookworm).
#
# Idempotent: packages that are already installed are detected with dpkg-query, and apt-get
# runs only when something is missing; librdkafka is built once into ~/.cache/processor
# (scripts/librdkafka.sh), so a second run takes well under a second.
#
# Usage: bash scripts/setup.sh [library]
#   library   only what the library and its examples build with (scripts/demo.sh): no test,
#             fuzz, benchmark, browser or broker dependencies.
set -euo pipefail

profile="${1:-all}"
if [[ "${profile}" != all && "${profile}" != library ]]; then
  echo "setup: unknown profile '${profile}': use 'library' or nothing (everything)" >&2
  exit 2
fi

# Each group says what uses it.
packages=(
  # The build (CMake + Ninja, GCC 12), and the C++ dependencies of the library.
  build-essential
  cmake
  ninja-build
  pkg-config
  git
  patch  # scripts/librdkafka.sh applies scripts/librdkafka-patches
  librocksdb-dev
  # librdkafka 2.12 or newer, built by scripts/librdkafka.sh from Debian's source package (Debian
  # 12's own librdkafka-dev is 2.0.2): its compression and TLS libraries, Cyrus SASL for GSSAPI
  # (Kerberos) with its GSSAPI plugin at run time, and libcurl for OAUTHBEARER's OIDC token
  # endpoints.
  libssl-dev
  zlib1g-dev
  libzstd-dev
  libsasl2-dev
  libsasl2-modules-gssapi-mit
  libcurl4-openssl-dev
  # The monitor's HTTP(S) exporter (processor::monitor, in the library): libmicrohttpd, an
  # event-driven server (a slow client costs a descriptor, not a thread), its TLS library GnuTLS
  # (also called directly for certificates and client certificates), and libxcrypt's crypt_r for
  # basic auth's bcrypt hashes.
  libmicrohttpd-dev
  libgnutls28-dev
  libcrypt-dev
)
if [[ "${profile}" == all ]]; then
  packages+=(
    # The tests (GoogleTest) and the benchmarks (Google Benchmark).
    libgtest-dev
    googletest
    libbenchmark-dev
    # Clang's -Wthread-safety (the CI stage that checks the lock annotations), libFuzzer with its
    # sanitizer runtimes for the fuzz targets (tests/fuzz/), and clang-format (the format stage).
    clang-14
    libclang-rt-14-dev
    libfuzzer-14-dev
    clang-format-14
    # offsetctl (tools/offsetctl): arguments, JSON output, the exporter's --web-config (YAML).
    libcli11-dev
    libfmt-dev
    nlohmann-json3-dev
    libyaml-cpp-dev
    # The exporter's TLS tests make their certificates with the openssl command line.
    openssl
    # The exporter's page is rendered in headless Chromium by a test.
    chromium
    # The example that plugs spdlog into the library's log sink (spdlog brings libfmt-dev).
    libspdlog-dev
    # The integration tier's Kafka broker: Maven fetches its jars (scripts/kafka/broker.sh fetch);
    # broker.sh picks free ports with python3 when it can.
    maven
    python3
    # A test still running shortly before its time-out prints every thread's stack from gdb
    # (tests/support/hang_report.cpp).
    gdb
  )
fi
# The integration tier's Kafka broker (scripts/kafka/broker.sh, Kafka 4.x) needs Java 17 or newer.
# Any such runtime on PATH will do; otherwise install Debian's OpenJDK 17 (a no-op once it is).
java_major=0
if command -v java >/dev/null 2>&1; then
  # 'openjdk version "17.0.15" ...' -> 17; 'java version "1.8.0_392"' -> 8
  java_major="$(java -version 2>&1 | sed -n '1s/.*version "\(1\.\)\{0,1\}\([0-9][0-9]*\).*/\2/p')"
fi
if [[ "${profile}" == all ]] && ((${java_major:-0} < 17)); then
  packages+=(openjdk-17-jre-headless)
fi

is_installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" == "installed" ]]
}

missing=()
for package in "${packages[@]}"; do
  if ! is_installed "${package}"; then
    missing+=("${package}")
  fi
done

# The test that scrapes /metrics parses it with Prometheus' own Python client (PyPI), for the
# python3 on PATH, which may not be Debian's.
if [[ "${profile}" == all ]] && ! python3 -c 'import prometheus_client' >/dev/null 2>&1; then
  echo "setup: installing the Python package prometheus_client"
  python3 -m pip install --quiet --user prometheus_client 2>/dev/null ||
    python3 -m pip install --quiet --user --break-system-packages prometheus_client
fi

# librdkafka, once the packages it builds with are there.
ensure_librdkafka() {
  bash "$(dirname "${BASH_SOURCE[0]}")/librdkafka.sh" >/dev/null
}

if ((${#missing[@]} == 0)); then
  ensure_librdkafka
  echo "setup: all ${#packages[@]} dependencies (${profile}) are installed"
  exit 0
fi

as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "setup: missing packages (${missing[*]}) and not root, with no sudo to install them" >&2
    exit 1
  fi
fi

echo "setup: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
echo "setup: installed ${missing[*]}"
ensure_librdkafka
