#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Check the OpenMetrics texts the conformance suite kept, with an
independent parser (Debian's python3-prometheus-client).

    /usr/bin/python3 ci/openmetrics.py DIR

DIR holds what cw-conformance wrote under CWC_METRICS_DIR:
  *.om       encoded texts: each must parse as OpenMetrics;
  *.expect   beside a text: lines "LABEL HEXVALUE" that the parsed text
             must hold as a label value (the escaping case);
  *.headers  the response head of an HTTP scrape: status 200 and the
             Prometheus content type.
Exits non-zero on the first kind of failure it finds, after listing all.
"""
import glob
import os
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

CONTENT_TYPE = "text/plain; version=0.0.4"


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def label_values(families):
    seen = set()
    for family in families:
        for sample in family.samples:
            seen.update(sample.labels.items())
    return seen


def check_text(path):
    families = list(text_string_to_metric_families(read(path)))
    expect = path[: -len(".om")] + ".expect"
    if os.path.exists(expect):
        seen = label_values(families)
        for line in read(expect).splitlines():
            label, hexvalue = line.split(" ")
            value = bytes.fromhex(hexvalue).decode("utf-8")
            if (label, value) not in seen:
                raise ValueError(f"label {label}={value!r} did not come back")


def check_headers(path):
    lines = read(path).split("\r\n")
    if not lines[0].startswith("HTTP/1.1 200"):
        raise ValueError(f"status line {lines[0]!r}")
    types = [l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("content-type:")]
    if types != [CONTENT_TYPE]:
        raise ValueError(f"content type {types!r}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    texts = sorted(glob.glob(os.path.join(argv[1], "*.om")))
    heads = sorted(glob.glob(os.path.join(argv[1], "*.headers")))
    failed = 0
    for path, check in [(p, check_text) for p in texts] + [(p, check_headers) for p in heads]:
        try:
            check(path)
        except Exception as e:  # any refusal of the parser is a failure
            print(f"openmetrics: {path}: {e}")
            failed += 1
    print(f"openmetrics: {len(texts)} texts and {len(heads)} HTTP responses checked, "
          f"{failed} refused")
    if not texts:
        print("openmetrics: no text was kept: is CWC_METRICS_DIR passed to the suite?")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
