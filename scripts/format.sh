#!/usr/bin/env bash
# Lays out every C++ file of the project as .clang-format says, with clang-format-14 (Debian's;
# scripts/setup.sh installs it), or checks that it is.
#
# Usage: bash scripts/format.sh [--check]
#   --check   change nothing; print each line clang-format would change (file:line) and exit 1 if
#             there is any (CI's format stage)
# The files: every *.cpp, *.hpp and *.h that git tracks.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"
mode="${1:-}"
if [[ -n "${mode}" && "${mode}" != --check ]]; then
  echo "format: unknown argument '${mode}': use --check or nothing" >&2
  exit 2
fi
formatter="${CLANG_FORMAT:-clang-format-14}"
if ! command -v "${formatter}" >/dev/null 2>&1; then
  echo "format: ${formatter} is not installed; run scripts/setup.sh" >&2
  exit 1
fi

mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
if [[ "${mode}" == --check ]]; then
  report="$(mktemp)"
  trap 'rm -f "${report}"' EXIT
  if ! "${formatter}" --dry-run --Werror "${files[@]}" 2>"${report}"; then
    { grep -A2 'error:' "${report}" | head -60 >&2; } || true  # the first 20 lines
    echo "format: $(grep -c 'error:' "${report}") lines in $(grep 'error:' "${report}" | cut -d: -f1 | sort -u | wc -l)" \
      "files differ from .clang-format's layout; run: bash scripts/format.sh" >&2
    exit 1
  fi
  echo "format: all ${#files[@]} C++ files are laid out as .clang-format says"
else
  "${formatter}" -i "${files[@]}"
  echo "format: laid out ${#files[@]} C++ files"
fi
