#!/usr/bin/env python3
"""Prints, for each test the last ctest run failed, its failure lines again, last.

Usage: python3 scripts/failure_digest.py <build-dir>

A failed test's output sits in the middle of a long CI log, which a truncated view of the log
drops; this digest comes after ctest's summary, so the reason for a failure is in the log's tail:
GoogleTest's failure lines with what follows them, the robustness tests' outcome lines ("run ...",
"... exited by itself" and the dead worker's last lines after it), and the last lines of the test's
output. Reads ctest's own records
(Testing/Temporary/LastTest.log and LastTestsFailed.log); prints nothing when none failed.
"""
import pathlib
import re
import sys

# Lines worth seeing again, and how many lines after each (GoogleTest's expected/actual follow).
PATTERNS = [
    (re.compile(r"(\.cpp|\.hpp):\d+: Failure"), 6),
    (re.compile(r"^run \S+ \("), 0),  # a robustness run's outcome
    (re.compile(r"exited by itself|did not|timed out|Timeout|terminate called|Sanitizer"), 0),
    (re.compile(r"^    \| "), 0),  # a dead worker's last lines (tests/support/worker_process.hpp)
]
TAIL = 8
MAX_LINES = 60  # per test


def failed_names(temporary: pathlib.Path) -> list[str]:
    failed = temporary / "LastTestsFailed.log"
    if not failed.exists():
        return []
    names = []
    for line in failed.read_text(errors="replace").splitlines():
        _, _, name = line.partition(":")
        if name:
            names.append(name.strip())
    return names


def outputs(log: str) -> dict[str, list[str]]:
    """Each test's output lines, by name."""
    result: dict[str, list[str]] = {}
    name = None
    lines: list[str] = []
    inside = False
    for line in log.splitlines():
        match = re.match(r'^"(.*)" start time:', line)
        if match:
            name, lines, inside = match.group(1), [], False
            continue
        if name is None:
            continue
        if line.startswith("Output:"):
            inside = True
            continue
        if line.startswith("<end of output>"):
            result[name] = [l for l in lines if not re.fullmatch(r"-+", l)]
            name = None
            continue
        if inside:
            lines.append(line)
    return result


def digest(lines: list[str]) -> list[str]:
    keep = set()
    for i, line in enumerate(lines):
        for pattern, after in PATTERNS:
            if pattern.search(line):
                keep.update(range(i, min(len(lines), i + after + 1)))
    keep.update(range(max(0, len(lines) - TAIL), len(lines)))
    chosen = [lines[i] for i in sorted(keep)]
    return chosen[-MAX_LINES:]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    temporary = pathlib.Path(sys.argv[1]) / "Testing" / "Temporary"
    names = failed_names(temporary)
    if not names:
        return 0
    log_file = temporary / "LastTest.log"
    by_name = outputs(log_file.read_text(errors="replace")) if log_file.exists() else {}
    print(f"\n== why {len(names)} test(s) failed (their failure lines, from {log_file}):")
    for name in names:
        print(f"-- {name}")
        for line in digest(by_name.get(name, [])) or ["(no output recorded)"]:
            print(f"   {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
