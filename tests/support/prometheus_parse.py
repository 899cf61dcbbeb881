#!/usr/bin/env python3
"""Parses a Prometheus text exposition with Prometheus' own Python parser (prometheus_client) and
prints what it understood, one line each, for the exporter's tests to assert on:

  FAMILY <name> <type>
  SAMPLE <sample name> <label=value,... sorted by name> <value as repr(float)>

Usage: prometheus_parse.py FILE. Exits 2 when prometheus_client is missing, 1 when the text does
not parse (the parser's error on stderr).
"""
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError as error:  # the test skips on exit 2
    print(f"prometheus_client missing: {error}", file=sys.stderr)
    sys.exit(2)


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as error:  # noqa: BLE001 - any parser error fails the scrape
        print(f"parse error: {error!r}", file=sys.stderr)
        return 1
    for family in families:
        print(f"FAMILY {family.name} {family.type}")
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            print(f"SAMPLE {sample.name} {labels} {float(sample.value)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
