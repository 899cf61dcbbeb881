#!/usr/bin/env bash
# Builds one of the Java peers of the side-by-side benchmarks (a Maven project beside its own
# build.sh, whose jar is target/<name>.jar with its dependencies in target/lib) and prints, as
# its last line on stdout, the command that runs it: `java -jar <abs path>/target/<name>.jar`.
# Quiet; does nothing when the jar is newer than pom.xml and every source and was built with the
# same Maven arguments; other arguments force a rebuild. Exit 1 (with Maven's log on stderr) when
# the build fails.
#
# Usage: bash bench/maven_peer_build.sh <project dir> <jar name> [maven args...]
set -euo pipefail

here="$(cd "${1:?the project directory of the peer}" && pwd)"
jar="${here}/target/${2:?the name of the jar}.jar"
shift 2
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
