#!/usr/bin/env bash
# Builds the Confluent Parallel Consumer peer of the side-by-side benchmark (see README.md beside
# this file) and prints, as its last line on stdout, the command that runs it:
#   java -jar <abs path>/target/parallel-consumer-peer.jar
# followed by its flags. Quiet; does nothing when the jar is newer than pom.xml and every source.
# Extra arguments go to Maven (e.g. -o, -Dparallel-consumer.version=X); different arguments than
# the last build force a rebuild. Exit 1 (with Maven's log on stderr) when the build fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "${here}/../maven_peer_build.sh" "${here}" parallel-consumer-peer "$@"
