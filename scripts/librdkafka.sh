#!/usr/bin/env bash
# Builds a current librdkafka from Debian's source package into a per-user cache, once, when the
# system's librdkafka is older than processor needs (Debian 12 ships 2.0.2; processor needs 2.12
# or newer: Kafka 4's consumer group protocol, KIP-848, is generally available from 2.12).
#
# Where it comes from: Debian's newer suites carry the current librdkafka as a source package.
# `apt-get source` fetches it by package name through a sources list of this script's own (in the
# cache, not in /etc/apt), whose deb-src entry takes the mirror from the machine's own apt sources
# and changes only the suite. Nothing is installed system-wide, and no host is written here.
#
# Where it goes: ${PROCESSOR_CACHE:-~/.cache/processor}/librdkafka-<version>, with include/, lib/
# and lib/pkgconfig/rdkafka.pc. CMake looks there (CMakeLists.txt, PROCESSOR_RDKAFKA_ROOT), and the
# installed processorConfig.cmake and processor.pc point consumers at the same one. The .pc file's
# Libs carry an rpath, so that a program linked through pkg-config runs against this librdkafka and
# not an older system one.
#
# How it is built: without C11 threads, so that librdkafka's threads go through pthread_create,
# which ThreadSanitizer intercepts (glibc's thrd_create calls it past the interceptor); with zlib,
# zstd, lz4 (built in) and OpenSSL; with every SASL mechanism Kafka has: PLAIN, SCRAM, OAUTHBEARER
# with OIDC token endpoints (libcurl) and GSSAPI/Kerberos (Cyrus SASL; its GSSAPI plugin,
# libsasl2-modules-gssapi-mit, at run time). builtin.features then lists sasl_gssapi and oidc, and
# a build lacking either (an older cache) is built again.
#
# What is changed: the patches in scripts/librdkafka-patches/, each fixing a librdkafka defect that
# reaches our users and that no release fixes yet (each file says which, and why). A build is made
# with every one of them or not at all, and a cached build lacking one is built again.
#
# Usage: bash scripts/librdkafka.sh        prints the prefix of the librdkafka to build against
#   PROCESSOR_RDKAFKA_SUITES   the Debian suites to try, in order. Default: testing unstable
#   PROCESSOR_RDKAFKA_VERSION  the upstream version to prefer when a suite has it. Default: 2.14.2
#   JOBS                       parallel build jobs. Default: 2
# Progress goes to stderr; the prefix alone to stdout.
set -euo pipefail

minimum="2.12.0"
preferred="${PROCESSOR_RDKAFKA_VERSION:-2.14.2}"
suites="${PROCESSOR_RDKAFKA_SUITES:-testing unstable}"
cache="${PROCESSOR_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/processor}"
# What a cached build must have been built with. The build writes them to a stamp file in its prefix
# (share/processor-build-features) after checking them against librdkafka's own builtin.features.
required_features="sasl_gssapi oidc"
patches_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/librdkafka-patches"
# The patches a cached build must carry, by name and content, written to the same stamp file as
# "patch:<name>-<sha256 prefix>": a patch changed is a build made again.
required_patches=""
for patch_file in "${patches_dir}"/*.patch; do
  [[ -f "${patch_file}" ]] || continue
  required_patches+="$(basename "${patch_file}" .patch)-$(sha256sum "${patch_file}" | cut -c1-12) "
done

say() { echo "librdkafka: $*" >&2; }

# version_at_least A B: A >= B, as dpkg compares versions.
version_at_least() { dpkg --compare-versions "$1" ge "$2"; }

# has_features <prefix>: the build in <prefix> was made with every required feature.
has_features() {
  local stamp="$1/share/processor-build-features" feature
  [[ -f "$1/lib/pkgconfig/rdkafka.pc" && -f "${stamp}" ]] || return 1
  for feature in ${required_features}; do
    grep -qw -- "${feature}" "${stamp}" || return 1
  done
  for patch in ${required_patches}; do
    grep -qx -- "patch:${patch}" "${stamp}" || return 1
  done
  # and no other (a patch taken out is a build made again too)
  [[ "$(grep -c '^patch:' "${stamp}")" -eq "$(wc -w <<<"${required_patches}")" ]]
}

# A cached build, the preferred version first, else the newest that is recent enough.
cached_prefix() {
  local dir version best="" best_version=""
  if has_features "${cache}/librdkafka-${preferred}"; then
    echo "${cache}/librdkafka-${preferred}"
    return 0
  fi
  for dir in "${cache}"/librdkafka-*/; do
    has_features "${dir%/}" || continue
    version="$(basename "${dir}")"
    version="${version#librdkafka-}"
    if version_at_least "${version}" "${minimum}" &&
      { [[ -z "${best_version}" ]] || version_at_least "${version}" "${best_version}"; }; then
      best="${dir%/}"
      best_version="${version}"
    fi
  done
  [[ -n "${best}" ]] && echo "${best}"
}

if prefix="$(cached_prefix)"; then
  echo "${prefix}"
  exit 0
fi

# The mirror of the machine's own Debian sources: the first archive URI (not the security one),
# from deb822 .sources files or one-line .list entries.
mirror="$(
  {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -n 's/^deb\(-src\)\{0,1\}[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\).*/\3/p'
  } | grep -E '/debian/?$' | grep -v security | head -n 1 || true
)"
if [[ -z "${mirror}" ]]; then
  say "no Debian archive found in the machine's apt sources (/etc/apt); cannot fetch the source package"
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/processor-librdkafka.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
apt_options=(
  -o "Dir::Etc::SourceList=${work}/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=${work}/lists"
  -o "Dir::Cache=${work}/cache"
  -o "APT::Sandbox::User=root"
)
mkdir -p "${work}/lists/partial" "${work}/cache/archives/partial" "${work}/src"

fetched=""
for suite in ${suites}; do
  echo "deb-src ${mirror} ${suite} main" >"${work}/sources.list"
  say "fetching Debian's source package librdkafka from the ${suite} suite"
  if ! apt-get "${apt_options[@]}" update >"${work}/update.log" 2>&1; then
    say "could not read the ${suite} suite's sources:"
    tail -n 5 "${work}/update.log" >&2
    continue
  fi
  # The preferred version when the suite still has it, else the suite's own.
  available="$(apt-cache "${apt_options[@]}" showsrc librdkafka 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n 1)"
  if [[ -z "${available}" ]]; then
    say "the ${suite} suite has no source package librdkafka"
    continue
  fi
  upstream="${available%-*}"
  upstream="${upstream#*:}"
  if ! version_at_least "${upstream}" "${minimum}"; then
    say "the ${suite} suite has librdkafka ${upstream}, older than ${minimum}"
    continue
  fi
  (cd "${work}/src" && apt-get "${apt_options[@]}" source --download-only "librdkafka=${available}" \
    >"${work}/source.log" 2>&1) || { tail -n 5 "${work}/source.log" >&2; continue; }
  fetched="${upstream}"
  break
done
if [[ -z "${fetched}" ]]; then
  say "no suite of ${suites} offered librdkafka ${minimum} or newer"
  exit 1
fi

prefix="${cache}/librdkafka-${fetched}"
say "building librdkafka ${fetched} into ${prefix} (about a minute on 2 cores)"
tar -xzf "${work}"/src/librdkafka_"${fetched}".orig.tar.* -C "${work}/src"
source_dir="$(find "${work}/src" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
staging="${prefix}.partial"
rm -rf "${staging}"
(
  cd "${source_dir}"
  for patch in ${required_patches}; do
    file="${patches_dir}/${patch%-*}.patch"
    say "applying $(basename "${file}")"
    patch -p1 --forward --no-backup-if-mismatch <"${file}" >"${work}/patch.log" 2>&1 ||
      { cat "${work}/patch.log" >&2; say "$(basename "${file}") does not apply to librdkafka ${fetched}"; exit 1; }
  done
  ./configure --prefix="${prefix}" --no-download --disable-c11threads --enable-curl --enable-gssapi \
    --disable-lz4-ext --enable-zstd --enable-zlib --enable-ssl >"${work}/configure.log" 2>&1 ||
    { tail -n 20 "${work}/configure.log" >&2; exit 1; }
  make -j "${JOBS:-2}" -C src >"${work}/make.log" 2>&1 || { tail -n 30 "${work}/make.log" >&2; exit 1; }
  make -C src install DESTDIR="${staging}" >>"${work}/make.log" 2>&1 || { tail -n 30 "${work}/make.log" >&2; exit 1; }
)
# The features librdkafka itself says it was built with (the builtin.features property), asked of
# the built library by a small program; each required one must be there.
cat >"${work}/features.c" <<'EOF'
#include <librdkafka/rdkafka.h>
#include <stdio.h>
int main(void) {
  char features[512];
  size_t size = sizeof features;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_get(conf, "builtin.features", features, &size) != RD_KAFKA_CONF_OK) return 1;
  puts(features);
  rd_kafka_conf_destroy(conf);
  return 0;
}
EOF
features="$(cc -o "${work}/features" "${work}/features.c" -I"${staging}${prefix}/include" \
  -L"${staging}${prefix}/lib" -Wl,-rpath,"${staging}${prefix}/lib" -lrdkafka && "${work}/features" || true)"
for feature in ${required_features}; do
  if [[ ",${features}," != *",${feature},"* ]]; then
    say "the build lacks ${feature} (builtin.features: ${features:-unknown}); see ${work}/configure.log:"
    grep -iE 'sasl|curl|gssapi' "${work}/configure.log" | tail -n 10 >&2
    exit 1
  fi
done
mkdir -p "${staging}${prefix}/share"
{
  echo "${features}"
  for patch in ${required_patches}; do echo "patch:${patch}"; done
} >"${staging}${prefix}/share/processor-build-features"
# Moved into place whole, so that an interrupted build never looks like a cached one.
rm -rf "${prefix}"
mv "${staging}${prefix}" "${prefix}"
rm -rf "${staging}"
# Static archives are not used (libprocessor links librdkafka.so) and take 50 MB.
rm -f "${prefix}"/lib/librdkafka*.a "${prefix}"/lib/pkgconfig/rdkafka-static.pc
sed -i 's|^Libs: -L${libdir} -lrdkafka$|Libs: -L${libdir} -Wl,-rpath,${libdir} -lrdkafka|' "${prefix}/lib/pkgconfig/rdkafka.pc"
say "librdkafka ${fetched} is in ${prefix}"
echo "${prefix}"
