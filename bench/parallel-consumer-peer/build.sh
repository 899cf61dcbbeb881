#!/usr/bin/env bash
# Builds the Confluent Parallel Consumer peer of the side-by-side benchmark (see README.md beside
# this file) and prints, as its last line on stdout, the command that runs it:
#   java -jar <abs path>/target/parallel-consumer-peer.jar
# followed by its flags. Quiet; does nothing when the jar is newer than pom.xml and every source.
# Extra arguments go to Maven (e.g. -o, -Dparallel-consumer.version=X); different arguments than
# the last build force a rebuild. Exit 1 (with Maven's log on stderr) when the build fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jar="${here}/target/parallel-consumer-peer.jar"
stamp="${here}/target/.build-args"
args="$*"

java_bin="java"
if [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then java_bin="${JAVA_HOME}/bin/java"; fi

up_to_date() {
  [[ -f "${jar}" && -d "${here}/target/lib" && -f "${stamp}" ]] || return 1
  [[ "$(cat "${stamp}")" == "${args}" ]] || return 1
  [[ -z "$(find "${here}/pom.xml" "${here}/src" -newer "${jar}" -print -quit)" ]]
}

if ! up_to_date; then
  command -v mvn >/dev/null || { echo "build.sh: error: mvn not found" >&2; exit 1; }
  log="$(mktemp)"
  # Jars of an earlier build (other versions) must not stay on the manifest's class path.
  rm -rf "${here}/target/lib"
  if ! mvn -B -q -f "${here}/pom.xml" "$@" package >"${log}" 2>&1; then
    cat "${log}" >&2
    rm -f "${log}"
    echo "build.sh: error: the Maven build failed" >&2
    exit 1
  fi
  rm -f "${log}"
  printf '%s' "${args}" >"${stamp}"
  touch "${jar}"
fi

echo "${java_bin} -jar ${jar}"
