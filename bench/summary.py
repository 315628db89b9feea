#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""The table printed at the end of `make bench`: the figures the native and
deterministic backends are held to, each a ratio measured in the same run,
next to its target. Reads the benchmarks' output (bench/README.md says what
each line is) and prints ten lines; a figure the output lacks reads "-".

    python3 bench/summary.py RESULTS.txt
"""
import re
import sys


def find(text, pattern, group=1):
    m = re.search(pattern, text, re.M)
    return float(m.group(group)) if m else None


def fmt(x):
    return "-" if x is None else "%.2f" % x


def verdict(x, target, lower_is_better):
    if x is None:
        return "-"
    ok = x <= target if lower_is_better else x >= target
    return "met" if ok else "not met"


def storage_rows(text):
    rows = [("write 4 KiB, fdatasync every 16", "synced 4 KiB writes", 1.0),
            ("write 1 MiB, fdatasync every 4", "synced 1 MiB writes", 1.0),
            ("write 4 KiB, no sync", "unsynced 4 KiB writes", 1.1),
            (r"random read 4 KiB \(cached\)", "cached 4 KiB reads", 1.1)]
    out = []
    for label, name, target in rows:
        line = r"^storage %s\s.*ratio threads ([0-9.]+) uring ([0-9.]+)" % label
        threads, uring = find(text, line, 1), find(text, line, 2)
        # The targets are io_uring's; the threads figure is for comparison.
        out.append(("storage %s, time / raw" % name,
                    "threads %s  uring %s" % (fmt(threads), fmt(uring)),
                    "<= %.1f" % target, verdict(uring, target, True)))
    return out


SERVERS = {"native_default": "default workers", "native_ring": "ring workers"}


def echo_row(text, size, baseline="epoll", server="native_default", target=1.0,
             judged=(1, 64, 1024)):
    """The server against the baseline at each connection count; the
    target holds for the counts in `judged`."""
    figures, worst = [], None
    for conns in (1, 64, 1024):
        x = find(text, r"^echo conns=%d\s+size=%d\s.*%s/%s=([0-9.]+)"
                 % (conns, size, server, baseline))
        figures.append("%d: %s" % (conns, fmt(x)))
        if x is not None and conns in judged:
            worst = x if worst is None else min(worst, x)
    sizes = "64 B" if size == 64 else "64 KiB"
    return ("echo %s, %s / %s" % (sizes, SERVERS[server], baseline),
            "  ".join(figures), ">= %.1f" % target, verdict(worst, target, False))


def main():
    text = open(sys.argv[1]).read()
    rows = [("deterministic yield, audit on / bare switch",
             fmt(find(text, r"det_audit/bare=([0-9.]+)")), "<= 6.0",
             verdict(find(text, r"det_audit/bare=([0-9.]+)"), 6.0, True))]
    rows += storage_rows(text)
    rows.append(echo_row(text, 64))
    rows.append(echo_row(text, 65536))
    # io_backend CW_IO_URING: 1.2x epoll at 64 and 1,024 connections, and
    # at least the plain io_uring server.
    rows.append(echo_row(text, 64, "epoll", "native_ring", 1.2, (64, 1024)))
    rows.append(echo_row(text, 64, "io_uring", "native_ring"))
    print("%-48s %-36s %-8s %s" % ("summary", "measured", "target", ""))
    for name, measured, target, met in rows:
        print("%-48s %-36s %-8s %s" % (name, measured, target, met))


if __name__ == "__main__":
    main()
