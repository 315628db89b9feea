#!/usr/bin/env python3
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


def echo_row(text, size, baseline="epoll"):
    figures, worst = [], None
    for conns in (1, 64, 1024):
        x = find(text, r"^echo conns=%d\s+size=%d\s.*native_default/%s=([0-9.]+)"
                 % (conns, size, baseline))
        figures.append("%d: %s" % (conns, fmt(x)))
        if x is not None:
            worst = x if worst is None else min(worst, x)
    return ("echo %s, default workers / %s" % ("64 B" if size == 64 else "64 KiB", baseline),
            "  ".join(figures), ">= 1.0", verdict(worst, 1.0, False))


def main():
    text = open(sys.argv[1]).read()
    rows = [("deterministic yield, audit on / bare switch",
             fmt(find(text, r"det_audit/bare=([0-9.]+)")), "<= 6.0",
             verdict(find(text, r"det_audit/bare=([0-9.]+)"), 6.0, True))]
    rows += storage_rows(text)
    rows.append(echo_row(text, 64))
    rows.append(echo_row(text, 65536))
    rows.append(echo_row(text, 64, "io_uring"))
    one = find(text, r"^echo conns=64\s+size=64\s.*native_1_worker/epoll=([0-9.]+)")
    rows.append(("echo 64 B at 64 connections, one worker / epoll", fmt(one), "-", "-"))
    print("%-48s %-36s %-8s %s" % ("summary", "measured", "target", ""))
    for name, measured, target, met in rows:
        print("%-48s %-36s %-8s %s" % (name, measured, target, met))


if __name__ == "__main__":
    main()
