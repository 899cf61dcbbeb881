#!/usr/bin/env bash
# A real, single-node Apache Kafka broker for the integration tests: KRaft mode (one process that
# is both broker and controller), listening on 127.0.0.1 only, from the Maven artifacts
# org.apache.kafka:kafka_2.13 and org.apache.kafka:kafka-tools (see pom.xml beside this file).
#
# Usage: scripts/kafka/broker.sh COMMAND [options]
#   fetch                   fetch the broker's jars into the cache (idempotent; fast when done)
#   start [--dir DIR]       start a fresh broker (DIR's old data is wiped), wait until it serves,
#                           write DIR/broker.env and print its bootstrap address (127.0.0.1:PORT).
#                           If the broker of DIR already runs, just print its address.
#   start --secure [--dir DIR]
#                           the same, for a broker secured as production clusters are: TLS from a
#                           CA made in DIR/tls, SASL (SCRAM-SHA-256/512, PLAIN, OAUTHBEARER with
#                           unsecured JWTs), StandardAuthorizer with ACLs, users admin (super
#                           user), alice and bob with passwords made anew by each start, and Java
#                           client properties files in DIR/clients. It prints the SASL_SSL
#                           address. See "Secured broker" in scripts/kafka/README.md.
#                           stop, kill, restart and status work on a secured DIR as on any other.
#   start --nodes N [--dir DIR]
#                           a cluster of N nodes (3 to 9; plain listeners), each broker and
#                           controller of one KRaft quorum, in DIR/node-1 ... DIR/node-N: every
#                           topic, the offsets and transaction-state topics too, replicated 3
#                           times with min.insync.replicas 2. Prints the bootstrap list of every
#                           node; DIR/broker.env has it as KAFKA_BOOTSTRAP. A node is killed and
#                           restarted by name: kill --dir DIR --node K, then restart --dir DIR
#                           --node K (the same as --dir DIR/node-K). stop --dir DIR stops every
#                           node.
#   stop  [--dir DIR]       stop the broker of DIR (SIGTERM, SIGKILL after 30 s); never fails
#   kill  [--dir DIR]       SIGKILL the broker of DIR at once (a crash: no controlled shutdown) and
#                           wait until it is gone; its data, ports and server.properties stay, so
#                           that restart brings the same broker back. Never fails
#   restart [--dir DIR]     start the broker of DIR again on its existing data and ports (after a
#                           kill or a stop), wait until it serves and print its bootstrap address
#                           (the same as before). Fails when DIR holds no broker that start made.
#                           The log of the earlier run is kept as DIR/broker.log.N (N = 1, 2, ...)
#   status [--dir DIR]      print the bootstrap address and exit 0 if the broker of DIR runs, else 1
#   tool NAME [ARGS...]     run a Kafka command-line tool with the cached classpath. NAME is an
#                           alias (consumer-groups, share-groups, topics, get-offsets,
#                           console-producer, console-consumer, console-share-consumer,
#                           broker-api-versions, configs, acls, delete-records, transactions,
#                           metadata-quorum, storage) or a fully qualified class.
#                           Example: broker.sh tool consumer-groups --bootstrap-server
#                                    "$KAFKA_BOOTSTRAP" --describe --group g
#
# DIR/broker.env (written by start and restart, removed by stop and kill) holds, one KEY=value a line (shell-quoted):
#   KAFKA_BOOTSTRAP=127.0.0.1:PORT  KAFKA_LIBS=<jar dir>  KAFKA_VERSION=X.Y.Z
#   KAFKA_CONTROLLER=127.0.0.1:PORT KAFKA_PID=<pid>       KAFKA_DIR=<DIR>
# and, for a broker of start --secure (no password is in it), also:
#   KAFKA_SECURE=1  KAFKA_SASL_SSL_BOOTSTRAP=127.0.0.1:PORT (= KAFKA_BOOTSTRAP)
#   KAFKA_OAUTH_BOOTSTRAP=127.0.0.1:PORT  KAFKA_MISMATCH_BOOTSTRAP=127.0.0.1:PORT  KAFKA_CA=DIR/tls/ca.pem
#
# Environment:
#   PROCESSOR_KAFKA_VERSION        Kafka version. Default: the kafka.version of pom.xml
#   PROCESSOR_KAFKA_CACHE          jar cache. Default: $HOME/.cache/processor/kafka-<version>
#   PROCESSOR_KAFKA_DIR            default DIR. Default: <repo>/build/kafka
#   PROCESSOR_KAFKA_PORT           broker port (the SASL_SSL one with --secure). Default: a free port
#   PROCESSOR_KAFKA_CONTROLLER_PORT  controller port. Default: a free port
#   PROCESSOR_KAFKA_START_TIMEOUT  seconds start waits for readiness. Default: 120
#   PROCESSOR_KAFKA_HEAP           broker heap flags. Default: -Xms256m -Xmx512m
#   PROCESSOR_KAFKA_JVM_OPTS       extra JVM flags for the broker
#   PROCESSOR_KAFKA_MVN_ARGS       extra Maven arguments for fetch (e.g. -o, -Dmaven.repo.local=...)
#   PROCESSOR_KAFKA_JAVA           java executable. Default: $JAVA_HOME/bin/java, else java
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
pom="${script_dir}/pom.xml"

log() { echo "broker.sh: $*" >&2; }
die() {
  echo "broker.sh: error: $*" >&2
  exit 1
}

pom_version() { sed -n 's|.*<kafka.version>\(.*\)</kafka.version>.*|\1|p' "${pom}" | head -n 1; }

version="${PROCESSOR_KAFKA_VERSION:-$(pom_version)}"
[[ -n "${version}" ]] || die "cannot read kafka.version from ${pom}"
cache="${PROCESSOR_KAFKA_CACHE:-${HOME}/.cache/processor/kafka-${version}}"
libs="${cache}/libs"
marker="${cache}/.complete"

# ---- Java ---------------------------------------------------------------------------------------
java_bin() {
  if [[ -n "${PROCESSOR_KAFKA_JAVA:-}" ]]; then
    echo "${PROCESSOR_KAFKA_JAVA}"
  elif [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then
    echo "${JAVA_HOME}/bin/java"
  else
    command -v java || die "no java found: run scripts/setup.sh (Kafka ${version} needs Java 17+)"
  fi
}

# The broker of Kafka 4.x is built for Java 17 (class file 61); 3.x runs on 11+.
check_java() {
  local java="$1" line major need=17
  [[ "${version}" == 3.* ]] && need=11
  line="$("${java}" -version 2>&1 | head -n 1)"
  major="$(sed -n 's/.*version "\([0-9][0-9]*\)[."].*/\1/p' <<<"${line}")"
  [[ "${major}" == 1 ]] && major="$(sed -n 's/.*version "1\.\([0-9]*\).*/\1/p' <<<"${line}")"
  [[ -n "${major}" ]] || die "cannot tell the version of ${java}: ${line}"
  ((major >= need)) || die "${java} is Java ${major}; Kafka ${version} needs Java ${need}+ (run scripts/setup.sh)"
}

# ---- fetch --------------------------------------------------------------------------------------
pom_digest() { sha256sum "${pom}" | cut -d' ' -f1; }

fetched() {
  [[ -f "${marker}" ]] && grep -qx "kafka.version=${version}" "${marker}" &&
    grep -qx "pom.sha256=$(pom_digest)" "${marker}" && [[ -f "${libs}/kafka_2.13-${version}.jar" ]]
}

cmd_fetch() {
  fetched && return 0
  command -v mvn >/dev/null 2>&1 || die "mvn not found: run scripts/setup.sh"
  mkdir -p "${cache}"
  # One fetch at a time per cache (parallel test runs may race here).
  exec 8>"${cache}/.lock"
  flock 8
  if fetched; then
    exec 8>&-
    return 0
  fi
  local tmp="${cache}/libs.tmp.$$" started=${SECONDS}
  rm -rf "${cache}"/libs.tmp.* # what an interrupted fetch left
  log "fetching Kafka ${version} jars into ${libs} (Maven)"
  # Maven's output is kept and shown only when it fails (even -q prints colour resets).
  # shellcheck disable=SC2086 # PROCESSOR_KAFKA_MVN_ARGS is a list of words
  if ! mvn -B -q -Dstyle.color=never -f "${pom}" -Dkafka.version="${version}" \
    ${PROCESSOR_KAFKA_MVN_ARGS:-} dependency:copy-dependencies -DoutputDirectory="${tmp}" \
    >"${cache}/mvn.log" 2>&1; then
    cat "${cache}/mvn.log" >&2
    rm -rf "${tmp}"
    die "Maven could not fetch Kafka ${version} (its output is above and in ${cache}/mvn.log)"
  fi
  [[ -f "${tmp}/kafka_2.13-${version}.jar" ]] || die "Maven finished but ${tmp} has no kafka_2.13-${version}.jar"
  rm -rf "${libs}"
  mv "${tmp}" "${libs}"
  printf 'kafka.version=%s\npom.sha256=%s\n' "${version}" "$(pom_digest)" >"${marker}"
  log "fetched $(find "${libs}" -name '*.jar' | wc -l) jars ($(du -sh "${libs}" | cut -f1)) in $((SECONDS - started)) s"
  exec 8>&-
}

# ---- broker directory ---------------------------------------------------------------------------
broker_dir=""
node="" # --node K: the node of a cluster
parse_dir() {
  broker_dir="${PROCESSOR_KAFKA_DIR:-${repo_root}/build/kafka}"
  while (($#)); do
    case "$1" in
      --dir) (($# >= 2)) || die "--dir needs a value"; broker_dir="$2"; shift 2 ;;
      --dir=*) broker_dir="${1#--dir=}"; shift ;;
      --node) (($# >= 2)) || die "--node needs a value"; node="$2"; shift 2 ;;
      --node=*) node="${1#--node=}"; shift ;;
      *) die "unknown option: $1" ;;
    esac
  done
  if [[ -n "${node}" ]]; then
    [[ "${node}" =~ ^[1-9][0-9]*$ ]] || die "invalid --node '${node}': a node number (1, 2, ...)"
    [[ -f "${broker_dir}/node-${node}/server.properties" ]] || die "${broker_dir} has no node ${node} (start --nodes N makes them)"
    broker_dir="${broker_dir}/node-${node}"
  fi
  mkdir -p "${broker_dir}"
  broker_dir="$(cd "${broker_dir}" && pwd)"
}

# Pids of the java processes running the broker of ${broker_dir}: those with the arguments
# kafka.Kafka and exactly this directory's server.properties (whether or not the pid file is
# there: a lost pid file does not leave a broker behind).
broker_pids() {
  local props="${broker_dir}/server.properties" f
  # shellcheck disable=SC2013 # /proc/N/cmdline paths have no spaces
  for f in $(grep -lsxzF -- "${props}" /proc/[0-9]*/cmdline 2>/dev/null); do
    grep -qsxzF kafka.Kafka "${f}" 2>/dev/null && { f="${f#/proc/}"; echo "${f%/cmdline}"; }
  done
  return 0
}

lock_dir() {
  exec 9>"${broker_dir}/.lock"
  flock 9
}

# N (default 2) distinct free TCP ports on 127.0.0.1 (bound at once, so they differ, then released).
free_ports() {
  local count="${1:-2}"
  if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import socket, sys
socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()' "${count}"
  else
    # No python: probe random ports below the ephemeral range until nothing answers on them.
    local -a ports=()
    local port
    while ((${#ports[@]} < count)); do
      port=$((20000 + RANDOM % 12000))
      [[ " ${ports[*]} " == *" ${port} "* ]] && continue
      if ! (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then ports+=("${port}"); fi
    done
    echo "${ports[*]}"
  fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (what
# `kafka-storage random-uuid` prints; like Kafka, avoid ids that start with '-').
cluster_id() {
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    [[ "${id}" != -* && ${#id} -eq 22 ]] && break
  done
  echo "${id}"
}

write_properties() {
  local port="$1" controller_port="$2"
  cat >"${broker_dir}/server.properties" <<EOF
# Written by scripts/kafka/broker.sh for Kafka ${version}: a single-node KRaft test broker.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${controller_port}
listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller_port}
advertised.listeners=PLAINTEXT://127.0.0.1:${port}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
EOF
  common_properties >>"${broker_dir}/server.properties"
}

# The settings after the listeners, the same for a plain and a secured broker, and for each node
# of a cluster (replicas and min_isr set by start --nodes).
replicas=1
min_isr=1
# The consumer group protocol's session: a cluster's outlasts a coordinator's failover (the broker
# session of 4 s below, the election, the group's load), as the classic members of the cluster
# kill tests do with 10 s; 6 s fenced a live member while its coordinator moved.
consumer_session_ms=6000
common_properties() {
  cat <<EOF
log.dirs=${broker_dir}/data

# One node: every internal topic has one replica (a cluster: replicated, two in sync).
num.partitions=1
default.replication.factor=${replicas}
min.insync.replicas=${min_isr}
offsets.topic.replication.factor=${replicas}
transaction.state.log.replication.factor=${replicas}
transaction.state.log.min.isr=${min_isr}
share.coordinator.state.topic.replication.factor=${replicas}
share.coordinator.state.topic.min.isr=${min_isr}
auto.create.topics.enable=true
delete.topic.enable=true

# Fast tests: no wait for more members before the first rebalance, few coordinator partitions
# (the first group or transaction creates __consumer_offsets / __transaction_state, 50 partitions
# each by default), short session timeouts allowed.
group.initial.rebalance.delay.ms=0
offsets.topic.num.partitions=1
transaction.state.log.num.partitions=1
group.min.session.timeout.ms=1000
# Kafka 4's consumer group protocol (KIP-848, group.protocol=consumer): the session timeout and the
# heartbeat interval are the broker's, not the client's. Short, so that a killed member's
# partitions move within seconds in the kill tests (Kafka's defaults: 45 s and 5 s).
group.consumer.min.session.timeout.ms=1000
group.consumer.session.timeout.ms=${consumer_session_ms}
group.consumer.min.heartbeat.interval.ms=500
group.consumer.heartbeat.interval.ms=1000

# Quick restarts after a crash (broker.sh kill, then restart): the restarted controller keeps
# the killed incarnation's registration until its broker session expires, and refuses the new
# incarnation until then (DUPLICATE_BROKER_REGISTRATION). Kafka's 9 s default added ~9 s to every
# restart; heartbeats go from the broker to the controller in the same process.
broker.heartbeat.interval.ms=1000
broker.session.timeout.ms=4000

# A small footprint on a 2-core machine.
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=33554432
EOF
}

# ---- secured broker (start --secure) ------------------------------------------------------------
# One SASL_SSL listener for SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN (also the inter-broker one),
# one SASL_SSL listener for OAUTHBEARER with unsecured JWTs (OAUTH), one SASL_SSL listener whose
# certificate names another host (MISMATCH), and the controller listener over SASL_PLAINTEXT with
# PLAIN. Files: DIR/tls (certificates and stores), DIR/clients (Java client properties files and
# secrets.txt). Passwords are made anew by every start and are in server.properties and the
# files of DIR/clients and DIR/tls, never in broker.env.
secure=""        # "1" for start --secure, and for a restart of a secured DIR
users=(admin alice bob)
declare -A password=() # user (or store) -> password

# A password recognisable by its user and random: NAME-secret-<16 hex digits>.
new_secret() { printf '%s-secret-%s' "$1" "$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"; }

make_secrets() {
  local name
  for name in "${users[@]}" broker-keystore alice-p12 alice-key truststore-jks; do
    password["${name}"]="$(new_secret "${name}")"
  done
}

# A CA, the broker's certificates and alice's client certificate, in DIR/tls:
#   ca.pem                the CA (the broker's truststore; the clients' ssl.truststore / ssl.ca.location)
#   broker.pem            the broker's certificate (SAN IP:127.0.0.1, DNS:localhost), for SASL_SSL and OAUTH
#   broker.p12            its key, certificate and the CA, PKCS#12 (password broker-keystore-secret-...)
#   wrong-host.pem/.p12   the same for a certificate of DNS:wrong-host.invalid only (MISMATCH)
#   alice.pem alice.key   alice's client certificate (CN=alice) and its unencrypted PKCS#8 key
#   alice-encrypted.key   the same key, encrypted PKCS#8 (password in alice-key.password)
#   alice.p12             alice's key, certificate and the CA, PKCS#12 (password in alice.p12.password)
#   truststore.jks        the CA in a JKS store (password in truststore.jks.password)
#   other-ca.pem          another CA, which signed nothing the broker has (an untrusted truststore)
# The *.password files hold the password without a newline. The keys of the CAs and the broker's
# are deleted (the broker's are in the .p12 files). RSA 2048, valid for 30 days.
# make_tls runs in the background (while the storage is formatted: ~1 s less on 2 cores);
# wait_tls waits for it and fails the start if it failed.
tls_pid=""
make_tls() {
  local tls="${broker_dir}/tls" java="$1" keytool
  rm -rf "${tls}"
  mkdir -p "${tls}"
  command -v openssl >/dev/null 2>&1 || die "openssl not found (start --secure makes its certificates with it)"
  keytool="$(dirname "${java}")/keytool"
  [[ -x "${keytool}" ]] || keytool="$(command -v keytool)" || die "no keytool beside ${java}"
  (
    set -e
    umask 077
    cd "${tls}"
    serial() { echo "0x$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"; }
    leaf() { # NAME SUBJECT EXTENSIONS: NAME.key and NAME.pem, signed by the CA
      openssl req -new -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
      printf '%b' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -set_serial "$(serial)" -days 30 \
        -extfile "$1.ext" -out "$1.pem"
      rm -f "$1.csr" "$1.ext"
    }
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 \
      -subj "/CN=processor test CA" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days 30 \
      -subj "/CN=processor untrusted test CA" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign"
    leaf broker "/CN=localhost" 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n'
    leaf wrong-host "/CN=wrong-host.invalid" 'subjectAltName=DNS:wrong-host.invalid\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n'
    leaf alice "/CN=alice" 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n'
    openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker \
      -out broker.p12 -passout "pass:${password[broker-keystore]}"
    openssl pkcs12 -export -in wrong-host.pem -inkey wrong-host.key -certfile ca.pem -name broker \
      -out wrong-host.p12 -passout "pass:${password[broker-keystore]}"
    openssl pkcs12 -export -in alice.pem -inkey alice.key -certfile ca.pem -name alice \
      -out alice.p12 -passout "pass:${password[alice-p12]}"
    openssl pkcs8 -topk8 -v2 aes-256-cbc -in alice.key -out alice-encrypted.key \
      -passout "pass:${password[alice-key]}"
    "${keytool}" -importcert -noprompt -alias ca -file ca.pem -keystore truststore.jks \
      -storetype JKS -storepass "${password[truststore-jks]}"
    printf '%s' "${password[alice-p12]}" >alice.p12.password
    printf '%s' "${password[alice-key]}" >alice-key.password
    printf '%s' "${password[truststore-jks]}" >truststore.jks.password
    rm -f ca.key other-ca.key broker.key wrong-host.key
    chmod 644 ca.pem other-ca.pem
  ) >"${broker_dir}/tls.log" 2>&1 9>&- &
  tls_pid=$!
}

wait_tls() {
  [[ -n "${tls_pid}" ]] || return 0
  if ! wait "${tls_pid}"; then
    cat "${broker_dir}/tls.log" >&2
    die "making the certificates in ${broker_dir}/tls failed (log: ${broker_dir}/tls.log)"
  fi
  tls_pid=""
}

# DIR/clients/USER-MECHANISM.properties, as an operator hands them to a Kafka tool's
# --command-config (the bootstrap address is not in them: KAFKA_SASL_SSL_BOOTSTRAP, or
# KAFKA_OAUTH_BOOTSTRAP for the -oauthbearer ones), and DIR/clients/secrets.txt: every password
# of this start, one a line.
write_client_files() {
  local clients="${broker_dir}/clients" user mechanism jaas name
  rm -rf "${clients}"
  mkdir -p "${clients}"
  for user in "${users[@]}"; do
    for mechanism in SCRAM-SHA-256 SCRAM-SHA-512 PLAIN OAUTHBEARER; do
      case "${mechanism}" in
        SCRAM-*) jaas="org.apache.kafka.common.security.scram.ScramLoginModule required username=\"${user}\" password=\"${password[${user}]}\";" ;;
        PLAIN) jaas="org.apache.kafka.common.security.plain.PlainLoginModule required username=\"${user}\" password=\"${password[${user}]}\";" ;;
        OAUTHBEARER) jaas="org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"${user}\";" ;;
      esac
      (
        umask 077
        cat >"${clients}/${user}-${mechanism,,}.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=${mechanism}
sasl.jaas.config=${jaas}
ssl.truststore.type=PEM
ssl.truststore.location=${broker_dir}/tls/ca.pem
EOF
      )
    done
  done
  (
    umask 077
    for name in "${users[@]}" broker-keystore alice-p12 alice-key truststore-jks; do
      echo "${password[${name}]}"
    done >"${clients}/secrets.txt"
  )
}

# server.properties of a secured broker. The listeners:
#   SASL_SSL  SCRAM-SHA-256, SCRAM-SHA-512, PLAIN; TLS with broker.p12; ssl.client.auth=requested
#             (a client may show a certificate, which must then be the CA's; the principal is
#             the SASL user). Also the inter-broker listener: the broker logs in to itself with
#             PLAIN as admin.
#   OAUTH     SASL_SSL with OAUTHBEARER only, and Kafka's default server callback, which accepts
#             unsecured JWTs (alg "none") and takes the principal from the "sub" claim: a client
#             may claim to be anyone, admin included. It stands in for an identity provider.
#   MISMATCH  SASL_SSL with SCRAM-SHA-256 and PLAIN and the certificate of wrong-host.invalid:
#             clients that check the host name (Java's default) refuse it.
#   CONTROLLER  SASL_PLAINTEXT with PLAIN, where only admin has a password. The broker part of
#             this process registers with its controller part over it as admin. Not PLAINTEXT:
#             the controller would see User:ANONYMOUS, which would then have to be a super user,
#             and any client could use it with --bootstrap-controller (create ACLs, for one).
# StandardAuthorizer, no access without an ACL, super.users=User:admin: admin is the broker's
# own principal on the inter-broker and controller listeners (cluster actions), and the tests'
# administrator (ACLs). SCRAM credentials are in the metadata (format --add-scram); PLAIN users
# are in the listeners' JAAS options.
write_secure_properties() {
  local port="$1" oauth_port="$2" mismatch_port="$3" controller_port="$4" tls="${broker_dir}/tls"
  local user plain_users=""
  for user in "${users[@]}"; do plain_users+=" user_${user}=\"${password[${user}]}\""; done
  local plain="org.apache.kafka.common.security.plain.PlainLoginModule required"
  local scram="org.apache.kafka.common.security.scram.ScramLoginModule required;"
  (
    umask 077
    cat >"${broker_dir}/server.properties" <<EOF
# Written by scripts/kafka/broker.sh start --secure for Kafka ${version}: a single-node KRaft test
# broker with TLS, SASL and ACLs (see the comments of write_secure_properties in broker.sh).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${controller_port}
listeners=SASL_SSL://127.0.0.1:${port},OAUTH://127.0.0.1:${oauth_port},MISMATCH://127.0.0.1:${mismatch_port},CONTROLLER://127.0.0.1:${controller_port}
advertised.listeners=SASL_SSL://127.0.0.1:${port},OAUTH://127.0.0.1:${oauth_port},MISMATCH://127.0.0.1:${mismatch_port}
inter.broker.listener.name=SASL_SSL
sasl.mechanism.inter.broker.protocol=PLAIN
controller.listener.names=CONTROLLER
sasl.mechanism.controller.protocol=PLAIN
listener.security.protocol.map=SASL_SSL:SASL_SSL,OAUTH:SASL_SSL,MISMATCH:SASL_SSL,CONTROLLER:SASL_PLAINTEXT

# TLS: the broker's certificate (IP:127.0.0.1, DNS:localhost) and the CA as the truststore, for
# every TLS listener and for the broker's own connections to the SASL_SSL listener.
ssl.keystore.type=PKCS12
ssl.keystore.location=${tls}/broker.p12
ssl.keystore.password=${password[broker-keystore]}
ssl.key.password=${password[broker-keystore]}
ssl.truststore.type=PEM
ssl.truststore.location=${tls}/ca.pem
listener.name.sasl_ssl.ssl.client.auth=requested
listener.name.mismatch.ssl.keystore.type=PKCS12
listener.name.mismatch.ssl.keystore.location=${tls}/wrong-host.p12
listener.name.mismatch.ssl.keystore.password=${password[broker-keystore]}
listener.name.mismatch.ssl.key.password=${password[broker-keystore]}

# SASL, per listener.
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=${scram}
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${scram}
listener.name.sasl_ssl.plain.sasl.jaas.config=${plain} username="admin" password="${password[admin]}"${plain_users};
listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";
listener.name.mismatch.sasl.enabled.mechanisms=SCRAM-SHA-256,PLAIN
listener.name.mismatch.scram-sha-256.sasl.jaas.config=${scram}
listener.name.mismatch.plain.sasl.jaas.config=${plain}${plain_users};
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=${plain} username="admin" password="${password[admin]}" user_admin="${password[admin]}";

# ACLs: nothing without one, but for admin.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:admin

EOF
    common_properties >>"${broker_dir}/server.properties"
  )
}

# --add-scram arguments of the storage format: SCRAM-SHA-256 and -512 credentials of every user.
scram_args() {
  local user mechanism
  for user in "${users[@]}"; do
    for mechanism in SCRAM-SHA-256 SCRAM-SHA-512; do
      printf '%s\n' --add-scram "${mechanism}=[name=${user},password=${password[${user}]}]"
    done
  done
}

# The port of listener NAME in DIR/server.properties (empty if it has none).
listener_port() {
  sed -n 's|^listeners=||p' "${broker_dir}/server.properties" | tr ',' '\n' |
    sed -n "s|^$1://127\.0\.0\.1:\([0-9][0-9]*\)\$|\1|p" | head -n 1
}

fixed_ports="" # set by restart: the ports are the dir's, a taken one is an error
wait_ready() {
  local pid="$1" port="$2" timeout="${PROCESSOR_KAFKA_START_TIMEOUT:-120}"
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if ! kill -0 "${pid}" 2>/dev/null; then
      # A free port probed a moment ago may have been taken since (parallel runs): retryable.
      if [[ -z "${PROCESSOR_KAFKA_PORT:-}${PROCESSOR_KAFKA_CONTROLLER_PORT:-}" && -z "${fixed_ports}" ]] &&
        grep -q "Address already in use" "${broker_dir}/broker.log" 2>/dev/null; then
        return 2
      fi
      start_failed "the broker exited during startup"
    fi
    if grep -q "Kafka Server started" "${broker_dir}/broker.log" 2>/dev/null && port_open "${port}"; then
      return 0
    fi
    sleep 0.2
  done
  kill -KILL "${pid}" 2>/dev/null || true
  start_failed "the broker was not ready within ${timeout} s (PROCESSOR_KAFKA_START_TIMEOUT)"
}

start_failed() {
  {
    echo "broker.sh: error: $1"
    if grep -qE '^\[[^]]*\] (ERROR|FATAL) ' "${broker_dir}/broker.log" 2>/dev/null; then
      echo "---- first errors in ${broker_dir}/broker.log ----"
      grep -E -m 5 -A 3 '^\[[^]]*\] (ERROR|FATAL) ' "${broker_dir}/broker.log"
    fi
    echo "---- last 40 lines of ${broker_dir}/broker.log ----"
    tail -n 40 "${broker_dir}/broker.log" 2>/dev/null || echo "(no log)"
    echo "----"
  } >&2
  local pid
  for pid in $(broker_pids); do kill -KILL "${pid}" 2>/dev/null || true; done
  rm -f "${broker_dir}/broker.pid" "${broker_dir}/broker.env"
  exit 1
}

env_value() {
  [[ -f "${broker_dir}/broker.env" ]] || return 0
  sed -n "s/^$1=//p" "${broker_dir}/broker.env" | head -n 1
}

cluster_uuid="" # the id every node of a cluster is formatted with
# Format the metadata log (a static quorum: no --standalone needed). Arguments: java, then extra
# arguments of the format (--add-scram ...).
format_storage() {
  local java="$1"
  shift
  if ! "${java}" -Xshare:auto -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m \
    -Dlog4j2.configurationFile="${script_dir}/log4j2-tools.properties" -cp "${libs}/*" \
    kafka.tools.StorageTool format -t "${cluster_uuid:-$(cluster_id)}" -c "${broker_dir}/server.properties" "$@" \
    >"${broker_dir}/format.log" 2>&1 9>&-; then
    cat "${broker_dir}/format.log" >&2
    die "formatting the storage of ${broker_dir} failed"
  fi
}

# Start the broker in the background; its pid goes to launched_pid and DIR/broker.pid.
launched_pid=""
launch() {
  log "starting Kafka ${version} on $(sed -n 's|^listeners=||p' "${broker_dir}/server.properties"), dir ${broker_dir}"
  # setsid: the broker is not in the caller's process group (no Ctrl-C from a terminal, no kill
  # of a test runner's group); stdin/stdout/stderr and the lock fd are not shared with the caller.
  # C1 only (-XX:TieredStopAtLevel=1): starts ~2 s sooner on a busy 2-core machine and was no
  # slower under a 300k-message producer run; PROCESSOR_KAFKA_JVM_OPTS=-XX:TieredStopAtLevel=4
  # brings C2 back (the last flag wins).
  # shellcheck disable=SC2086 # heap and extra options are lists of words
  setsid "$1" ${PROCESSOR_KAFKA_HEAP:--Xms256m -Xmx512m} -server -XX:TieredStopAtLevel=1 -XX:+UseG1GC \
    -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
    -Djava.awt.headless=true -Dkafka.logs.dir="${broker_dir}" \
    -Dlog4j2.configurationFile="${script_dir}/log4j2-broker.properties" \
    ${PROCESSOR_KAFKA_JVM_OPTS:-} -cp "${libs}/*" kafka.Kafka "${broker_dir}/server.properties" \
    </dev/null >"${broker_dir}/broker.log" 2>&1 9>&- &
  launched_pid=$!
  disown "${launched_pid}" # no "Killed" job notice if startup fails and it is killed
  echo "${launched_pid}" >"${broker_dir}/broker.pid"
}

nodes="" # start --nodes N
cmd_start() {
  local -a args=()
  while (($#)); do
    case "$1" in
      --secure) secure=1; shift ;;
      --nodes) (($# >= 2)) || die "--nodes needs a value"; nodes="$2"; shift 2 ;;
      --nodes=*) nodes="${1#--nodes=}"; shift ;;
      *) args+=("$1"); shift ;;
    esac
  done
  if [[ -n "${nodes}" ]]; then
    [[ "${nodes}" =~ ^[0-9]+$ ]] && ((nodes >= 3 && nodes <= 9)) || die "invalid --nodes '${nodes}': 3 to 9"
    [[ -z "${secure}" ]] || die "--nodes and --secure together are not supported"
    parse_dir "${args[@]}"
    start_cluster
    return
  fi
  parse_dir "${args[@]}"
  lock_dir
  local running
  running="$(broker_pids)"
  # A running broker of the other kind (plain or secured) is replaced by a fresh one.
  if [[ -n "${running}" && -f "${broker_dir}/broker.env" && "$(env_value KAFKA_SECURE)" != "${secure}" ]]; then
    log "the broker of ${broker_dir} runs $([[ -n "${secure}" ]] && echo "without" || echo "with") --secure: starting a fresh one"
  elif [[ -n "${running}" && -f "${broker_dir}/broker.env" ]]; then
    local bootstrap
    bootstrap="$(env_value KAFKA_BOOTSTRAP)"
    if port_open "${bootstrap##*:}"; then
      log "the broker of ${broker_dir} already runs (pid ${running//$'\n'/ })"
      echo "${bootstrap}"
      return 0
    fi
  fi
  # Anything left of an earlier broker of this directory goes: a clean start every time.
  # shellcheck disable=SC2086 # one pid a word
  [[ -n "${running}" ]] && stop_pids ${running}

  cmd_fetch
  local java started=${SECONDS}
  java="$(java_bin)"
  check_java "${java}"

  local attempt port controller_port pid oauth_port="" mismatch_port=""
  local -a format_args=()
  if [[ -n "${secure}" ]]; then
    rm -f "${broker_dir}/server.properties" # the old passwords
    make_secrets
    make_tls "${java}"
    write_client_files
    mapfile -t format_args < <(scram_args)
  fi
  for attempt in 1 2 3; do
    rm -rf "${broker_dir}/data"
    rm -f "${broker_dir}/broker.pid" "${broker_dir}/broker.env" "${broker_dir}/broker.log" \
      "${broker_dir}/format.log" "${broker_dir}/server.properties"
    local ports
    if [[ -n "${secure}" ]]; then
      local -a four
      read -r -a four <<<"$(free_ports 4)"
      port="${PROCESSOR_KAFKA_PORT:-${four[0]}}"
      controller_port="${PROCESSOR_KAFKA_CONTROLLER_PORT:-${four[1]}}"
      oauth_port="${four[2]}"
      mismatch_port="${four[3]}"
      [[ "${port}" != "${controller_port}" ]] || die "broker and controller ports are both ${port}"
      [[ " ${oauth_port} ${mismatch_port} " != *" ${port} "* && " ${oauth_port} ${mismatch_port} " != *" ${controller_port} "* ]] ||
        die "a fixed port (PROCESSOR_KAFKA_PORT or PROCESSOR_KAFKA_CONTROLLER_PORT) is also a free one picked for another listener: try again"
      write_secure_properties "${port}" "${oauth_port}" "${mismatch_port}" "${controller_port}"
    else
      ports="$(free_ports)"
      port="${PROCESSOR_KAFKA_PORT:-${ports%% *}}"
      controller_port="${PROCESSOR_KAFKA_CONTROLLER_PORT:-${ports##* }}"
      [[ "${port}" != "${controller_port}" ]] || die "broker and controller ports are both ${port}"
      write_properties "${port}" "${controller_port}"
    fi
    format_storage "${java}" "${format_args[@]}"
    wait_tls
    launch "${java}"
    pid="${launched_pid}"
    local ready=0
    wait_ready "${pid}" "${port}" || ready=$?
    ((ready == 0)) && break
    log "port ${port} or ${controller_port} was taken meanwhile (attempt ${attempt}); new ports"
    ((attempt < 3)) || start_failed "no free port pair after 3 attempts"
  done
  # setsid execs java in place (this shell has no job control), so $! is the JVM; make sure.
  pid="$(broker_pids | head -n 1)"
  [[ -n "${pid}" ]] || start_failed "the broker is ready but its process cannot be found"
  echo "${pid}" >"${broker_dir}/broker.pid"

  write_env "${port}" "${controller_port}" "${pid}" "${oauth_port}" "${mismatch_port}"
  log "ready in $((SECONDS - started)) s (pid ${pid}); log ${broker_dir}/broker.log"
  echo "127.0.0.1:${port}"
}

# server.properties of node $1 of a cluster: broker port $2, controller port $3, the voters $4.
write_node_properties() {
  {
    echo "# Written by scripts/kafka/broker.sh for Kafka ${version}: node $1 of a ${nodes}-node KRaft test cluster."
    echo "process.roles=broker,controller"
    echo "node.id=$1"
    echo "controller.quorum.voters=$4"
    echo "listeners=PLAINTEXT://127.0.0.1:$2,CONTROLLER://127.0.0.1:$3"
    echo "advertised.listeners=PLAINTEXT://127.0.0.1:$2"
    echo "inter.broker.listener.name=PLAINTEXT"
    echo "controller.listener.names=CONTROLLER"
    echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    common_properties
  } >"${broker_dir}/server.properties"
}

# start --nodes N: every node formatted with one cluster id and launched at once (the quorum needs
# a majority to elect its leader), then each waited for.
start_cluster() {
  local cluster_dir="${broker_dir}" java started=${SECONDS} i voters="" bootstrap="" dir pids pid
  lock_dir
  for dir in "${cluster_dir}"/node-*; do
    [[ -d "${dir}" ]] || continue
    broker_dir="${dir}"
    pids="$(broker_pids)"
    # shellcheck disable=SC2086 # one pid a word
    [[ -n "${pids}" ]] && stop_pids ${pids}
  done
  broker_dir="${cluster_dir}"
  rm -rf "${cluster_dir}"/node-* "${cluster_dir}/broker.env"
  cmd_fetch
  java="$(java_bin)"
  check_java "${java}"
  replicas=3
  min_isr=2
  consumer_session_ms=10000
  cluster_uuid="$(cluster_id)"
  local -a ports launched=()
  read -r -a ports <<<"$(free_ports $((2 * nodes)))"
  for ((i = 1; i <= nodes; i++)); do
    voters+="${voters:+,}${i}@127.0.0.1:${ports[2 * i - 1]}"
    bootstrap+="${bootstrap:+,}127.0.0.1:${ports[2 * i - 2]}"
  done
  for ((i = 1; i <= nodes; i++)); do
    broker_dir="${cluster_dir}/node-${i}"
    mkdir -p "${broker_dir}"
    write_node_properties "${i}" "${ports[2 * i - 2]}" "${ports[2 * i - 1]}" "${voters}"
    format_storage "${java}"
    launch "${java}"
    launched+=("${launched_pid}")
  done
  fixed_ports=1 # the voters name every port: one taken meanwhile fails the start
  for ((i = 1; i <= nodes; i++)); do
    broker_dir="${cluster_dir}/node-${i}"
    wait_ready "${launched[i - 1]}" "${ports[2 * i - 2]}" || start_failed "node ${i} did not start"
    pid="$(broker_pids | head -n 1)"
    echo "${pid}" >"${broker_dir}/broker.pid"
    write_env "${ports[2 * i - 2]}" "${ports[2 * i - 1]}" "${pid}"
  done
  broker_dir="${cluster_dir}"
  {
    echo "KAFKA_BOOTSTRAP=${bootstrap}" # commas only: no quoting needed
    printf 'KAFKA_LIBS=%q\n' "${libs}"
    printf 'KAFKA_VERSION=%q\n' "${version}"
    printf 'KAFKA_DIR=%q\n' "${cluster_dir}"
    printf 'KAFKA_NODES=%q\n' "${nodes}"
  } >"${cluster_dir}/broker.env"
  log "${nodes}-node cluster ready in $((SECONDS - started)) s; nodes ${cluster_dir}/node-1 ... node-${nodes}"
  echo "${bootstrap}"
}

# Arguments: broker port, controller port, pid, and for a secured broker the OAUTH and MISMATCH ports.
write_env() {
  {
    printf 'KAFKA_BOOTSTRAP=%q\n' "127.0.0.1:$1"
    printf 'KAFKA_CONTROLLER=%q\n' "127.0.0.1:$2"
    printf 'KAFKA_LIBS=%q\n' "${libs}"
    printf 'KAFKA_VERSION=%q\n' "${version}"
    printf 'KAFKA_PID=%q\n' "$3"
    printf 'KAFKA_DIR=%q\n' "${broker_dir}"
    if [[ -n "${4:-}" ]]; then
      printf 'KAFKA_SECURE=1\n'
      printf 'KAFKA_SASL_SSL_BOOTSTRAP=%q\n' "127.0.0.1:$1"
      printf 'KAFKA_OAUTH_BOOTSTRAP=%q\n' "127.0.0.1:$4"
      printf 'KAFKA_MISMATCH_BOOTSTRAP=%q\n' "127.0.0.1:$5"
      printf 'KAFKA_CA=%q\n' "${broker_dir}/tls/ca.pem"
    fi
  } >"${broker_dir}/broker.env.tmp"
  mv "${broker_dir}/broker.env.tmp" "${broker_dir}/broker.env"
}

# The broker of an existing dir again: same server.properties (so the same ports and node), same
# data. After a SIGKILL, Kafka recovers the logs it finds unflushed (an unclean shutdown) before
# it serves.
cmd_restart() {
  parse_dir "$@"
  lock_dir
  [[ -f "${broker_dir}/server.properties" && -f "${broker_dir}/data/meta.properties" ]] ||
    die "${broker_dir} holds no broker to restart (no server.properties or formatted data): use start"
  local running
  running="$(broker_pids)"
  if [[ -n "${running}" ]]; then
    log "the broker of ${broker_dir} still runs (pid ${running//$'\n'/ }): stopping it first"
    # shellcheck disable=SC2086 # one pid a word
    stop_pids ${running}
  fi
  cmd_fetch
  local java started=${SECONDS} port controller_port pid n=1 oauth_port="" mismatch_port=""
  java="$(java_bin)"
  check_java "${java}"
  # A plain broker has the listeners PLAINTEXT and CONTROLLER; a secured one SASL_SSL, OAUTH,
  # MISMATCH and CONTROLLER.
  port="$(listener_port SASL_SSL)"
  if [[ -n "${port}" ]]; then
    secure=1
    oauth_port="$(listener_port OAUTH)"
    mismatch_port="$(listener_port MISMATCH)"
    [[ -n "${oauth_port}" && -n "${mismatch_port}" ]] || die "cannot read the ports of ${broker_dir}/server.properties"
  else
    port="$(listener_port PLAINTEXT)"
  fi
  controller_port="$(listener_port CONTROLLER)"
  [[ -n "${port}" && -n "${controller_port}" ]] || die "cannot read the ports of ${broker_dir}/server.properties"
  rm -f "${broker_dir}/broker.pid" "${broker_dir}/broker.env"
  if [[ -f "${broker_dir}/broker.log" ]]; then
    while [[ -e "${broker_dir}/broker.log.${n}" ]]; do n=$((n + 1)); done
    mv "${broker_dir}/broker.log" "${broker_dir}/broker.log.${n}"
  fi
  fixed_ports=1
  launch "${java}"
  wait_ready "${launched_pid}" "${port}" || start_failed "the broker did not come back on port ${port}"
  pid="$(broker_pids | head -n 1)"
  [[ -n "${pid}" ]] || start_failed "the broker is ready but its process cannot be found"
  echo "${pid}" >"${broker_dir}/broker.pid"
  write_env "${port}" "${controller_port}" "${pid}" "${oauth_port}" "${mismatch_port}"
  log "restarted in $((SECONDS - started)) s (pid ${pid}); log ${broker_dir}/broker.log"
  echo "127.0.0.1:${port}"
}

# SIGTERM (a controlled shutdown), up to 30 s, then SIGKILL.
stop_pids() {
  local pid deadline
  for pid in "$@"; do kill -TERM "${pid}" 2>/dev/null || true; done
  deadline=$((SECONDS + 30))
  for pid in "$@"; do
    while kill -0 "${pid}" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    if kill -0 "${pid}" 2>/dev/null; then
      log "pid ${pid} did not stop within 30 s: SIGKILL"
      kill -KILL "${pid}" 2>/dev/null || true
      while kill -0 "${pid}" 2>/dev/null; do sleep 0.1; done
    fi
  done
}

cmd_stop() {
  parse_dir "$@"
  if [[ -z "${node}" && -f "${broker_dir}/node-1/server.properties" ]]; then
    # Every node at once: stopped one after another, the last would wait for a quorum that left.
    local cluster_dir="${broker_dir}" dir
    for dir in "${cluster_dir}"/node-*; do
      bash "${BASH_SOURCE[0]}" stop --dir "${dir}" &
    done
    wait
    rm -f "${cluster_dir}/broker.env"
    return 0
  fi
  lock_dir
  local pids
  pids="$(broker_pids)"
  if [[ -n "${pids}" ]]; then
    local started=${SECONDS}
    # shellcheck disable=SC2086
    stop_pids ${pids}
    log "stopped the broker of ${broker_dir} (pid ${pids//$'\n'/ }) in $((SECONDS - started)) s"
  else
    log "no broker of ${broker_dir} runs"
  fi
  rm -f "${broker_dir}/broker.pid" "${broker_dir}/broker.env"
  return 0
}

# A crash of the broker process: SIGKILL, no controlled shutdown, nothing flushed by the broker.
# Whatever it wrote is in the page cache (Kafka acknowledges before fsync), which a process kill
# does not lose; a machine crash would.
cmd_kill() {
  parse_dir "$@"
  local pids pid
  pids="$(broker_pids)"
  if [[ -z "${pids}" ]]; then
    log "no broker of ${broker_dir} runs"
  else
    # shellcheck disable=SC2086 # one pid a word
    for pid in ${pids}; do kill -KILL "${pid}" 2>/dev/null || true; done
    # Gone once reaped or a zombie (its parent, a start's shell, has exited: init reaps it).
    for pid in ${pids}; do
      while [[ -r "/proc/${pid}/stat" ]] && ! grep -qE '^[0-9]+ \([^)]*\) Z' "/proc/${pid}/stat" 2>/dev/null; do
        sleep 0.05
      done
    done
    log "killed the broker of ${broker_dir} (pid ${pids//$'\n'/ }) with SIGKILL; its data stays"
  fi
  rm -f "${broker_dir}/broker.pid" "${broker_dir}/broker.env"
  return 0
}

cmd_status() {
  parse_dir "$@"
  local pids bootstrap
  pids="$(broker_pids)"
  bootstrap="$(env_value KAFKA_BOOTSTRAP)"
  if [[ -n "${pids}" && -n "${bootstrap}" ]] && port_open "${bootstrap##*:}"; then
    echo "${bootstrap}"
    return 0
  fi
  log "no broker of ${broker_dir} runs"
  return 1
}

# ---- tool ---------------------------------------------------------------------------------------
# Alias -> main class. Kafka 4.x names; the 3.x ones differ for a few (kafka.admin.*, kafka.tools.*).
tool_class() {
  local v3=0
  [[ "${version}" == 3.* ]] && v3=1
  case "$1" in
    consumer-groups) echo org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
    share-groups) echo org.apache.kafka.tools.consumer.group.ShareGroupCommand ;;
    console-share-consumer) echo org.apache.kafka.tools.consumer.ConsoleShareConsumer ;;
    topics) echo org.apache.kafka.tools.TopicCommand ;;
    get-offsets) echo org.apache.kafka.tools.GetOffsetShell ;;
    console-producer) ((v3)) && echo kafka.tools.ConsoleProducer || echo org.apache.kafka.tools.ConsoleProducer ;;
    console-consumer) ((v3)) && echo kafka.tools.ConsoleConsumer || echo org.apache.kafka.tools.consumer.ConsoleConsumer ;;
    broker-api-versions) ((v3)) && echo kafka.admin.BrokerApiVersionsCommand || echo org.apache.kafka.tools.BrokerApiVersionsCommand ;;
    configs) ((v3)) && echo kafka.admin.ConfigCommand || echo org.apache.kafka.tools.ConfigCommand ;;
    acls) ((v3)) && echo kafka.admin.AclCommand || echo org.apache.kafka.tools.AclCommand ;;
    delete-records) echo org.apache.kafka.tools.DeleteRecordsCommand ;;
    transactions) echo org.apache.kafka.tools.TransactionsCommand ;;
    metadata-quorum) echo org.apache.kafka.tools.MetadataQuorumCommand ;;
    storage) echo kafka.tools.StorageTool ;;
    *.*) echo "$1" ;;
    *) die "unknown tool '$1' (an alias from the usage, or a fully qualified class name)" ;;
  esac
}

cmd_tool() {
  (($#)) || die "usage: broker.sh tool NAME [ARGS...]"
  local class java
  class="$(tool_class "$1")"
  shift
  cmd_fetch
  java="$(java_bin)"
  # Quick JVM start for short-lived tools: C1 only, serial GC, small heap, shared class data.
  exec "${java}" -Xshare:auto -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms32m -Xmx256m \
    -Djava.awt.headless=true -Dlog4j2.configurationFile="${script_dir}/log4j2-tools.properties" \
    -cp "${libs}/*" "${class}" "$@"
}

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; }

(($#)) || { usage; exit 2; }
command="$1"
shift
case "${command}" in
  fetch) (($# == 0)) || die "fetch takes no arguments"; cmd_fetch ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  kill) cmd_kill "$@" ;;
  restart) cmd_restart "$@" ;;
  status) cmd_status "$@" ;;
  tool) cmd_tool "$@" ;;
  -h | --help | help) usage ;;
  *) usage; die "unknown command: ${command}" ;;
esac
