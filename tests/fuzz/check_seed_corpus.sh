#!/usr/bin/env bash
# Checks that the committed seeds are what the encoders write today (ctest: fuzz_seed_corpus_is_current).
# Usage: check_seed_corpus.sh <fuzz_make_seed_corpus> <tests/fuzz directory> <scratch directory>
set -euo pipefail
generator="$1" committed="$2" fresh="$3"
rm -rf "${fresh}"
mkdir -p "${fresh}"
"${generator}" "${fresh}" >/dev/null
stale=0
while read -r file; do
  if ! cmp -s "${fresh}/${file}" "${committed}/${file}"; then
    echo "stale or missing seed: tests/fuzz/${file}"
    stale=1
  fi
done < <(cd "${fresh}" && find . -type f | sed 's,^\./,,' | sort)
if ((stale)); then
  echo "regenerate them: <build>/tests/fuzz/fuzz_make_seed_corpus tests/fuzz (tests/fuzz/README.md)" >&2
  exit 1
fi
