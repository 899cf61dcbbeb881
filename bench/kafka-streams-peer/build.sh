#!/usr/bin/env bash
# Builds the Kafka Streams peer of the side-by-side benchmark (see README.md beside this file)
# and prints, as its last line on stdout, the command that runs it:
#   java -jar <abs path>/target/kafka-streams-peer.jar
# followed by the mode and its flags. Quiet; does nothing when the jar is newer than pom.xml and
# every source. Extra arguments go to Maven (e.g. -Dkafka.version=X.Y.Z, -o); a different
# kafka.version than the last build forces a rebuild.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "${here}/../maven_peer_build.sh" "${here}" kafka-streams-peer "$@"
