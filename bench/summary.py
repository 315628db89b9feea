#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""The table printed at the end of `make bench`: the figures the native and
deterministic backends are held to, each a ratio measured in the same run,
next to its target. Reads the benchmarks' output (bench/README.md says what
each line is) and prints ten lines; a figure the output lacks reads "-".
Then the native backend against its peers (bench/peers/: Go, tokio,
libuv), measured in the same run: each workload's figures and the ratio
against the best peer, above 1 where cwrt is ahead. With --chart DATA it
also writes those ratios to DATA, one "label ratio target" line each,
for bench/summary.gp to draw.

    python3 bench/summary.py RESULTS.txt [--chart DATA]
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


PEERS = ("go", "tokio", "libuv")


def peer_figures(text, workload, key):
    """Each peer's `key` in its row for `workload`."""
    return {p: find(text, r"^peer %s %s: .*\b%s=(-?[0-9.]+)" % (p, re.escape(workload), key))
            for p in PEERS}


def echo_peers(text, conns, size):
    """cwrt's default echo server and each peer's, round trips per second."""
    line = r"^echo conns=%d\s+size=%d\s" % (conns, size)
    cwrt = find(text, line + r".*native_default\s+([0-9.]+)/s")
    figures = {p: find(text, line + r".*\s%s\s+([0-9.]+)/s" % p) for p in PEERS}
    return cwrt, figures


def best_ratio(cwrt, figures, lower_is_better, judge=None):
    """The best peer's figure against cwrt's (or the peer `judge`'s), put
    so that above 1 is cwrt ahead; None where a figure is missing or not
    positive (a lateness can be, for a timer that fires early)."""
    got = [v for p, v in figures.items() if v is not None and (judge is None or p == judge)]
    if cwrt is None or cwrt <= 0 or not got:
        return None
    best = min(got) if lower_is_better else max(got)
    if best <= 0:
        return None
    return best / cwrt if lower_is_better else cwrt / best


def peer_rows(text):
    """(label, unit, cwrt, {peer: figure}, lower_is_better, target, judge)."""
    rows = []
    spawn = find(text, r"^bench spawn: native_ns=([0-9.]+)")
    rows.append(("spawn+join of an empty task", "ns", spawn, peer_figures(text, "spawn", "ns"),
                 True, 2.0, None))
    pp = find(text, r"^bench pingpong: .*native_default_ns=([0-9.]+)")
    rows.append(("ping-pong through two channels", "ns", pp,
                 peer_figures(text, "pingpong", "ns"), True, 2.0, None))
    sleep = r"^bench sleepers: backend=native .*%s=([0-9.]+)"
    rows.append(("100,000 sleeping tasks, wall", "s", find(text, sleep % "wall_s"),
                 peer_figures(text, "sleepers", "wall_s"), True, None, None))
    mem = find(text, sleep % "bytes_per_task")
    mem_peers = peer_figures(text, "sleepers", "bytes_per_task")
    rows.append(("memory per sleeping task", "B", mem, mem_peers, True, None, None))
    rows.append(("memory per sleeping task, against go", "B", mem, mem_peers, True, 1.0, "go"))
    for q in ("p50", "p99"):
        late = find(text, r"^bench timers: .*late_%s_us=(-?[0-9.]+)" % q)
        rows.append(("timer lateness %s, 1 ms sleeps" % q, "us", late,
                     peer_figures(text, "timers", "late_%s_us" % q), True, None, None))
    for size in (64, 65536):
        for conns in (1, 64, 1024):
            cwrt, figures = echo_peers(text, conns, size)
            rows.append(("echo %s, %d conns" % ("64 B" if size == 64 else "64 KiB", conns),
                         "/s", cwrt, figures, False, 1.0 if conns > 1 else None, None))
    for label, name in (("write 4 KiB, fdatasync every 16", "synced 4 KiB writes"),
                        ("write 1 MiB, fdatasync every 4", "synced 1 MiB writes")):
        cwrt = find(text, r"^storage %s\s+threads\s+([0-9.]+) us" % re.escape(label))
        peers = {p: find(text, r"^storage peers %s\s.*\s%s ([0-9.]+) us" % (re.escape(label), p))
                 for p in PEERS}
        rows.append((name, "us", cwrt, peers, True, 1.0, None))
    return rows


def fig(x):
    if x is None:
        return "-"
    return "%.0f" % x if abs(x) >= 100 else "%.1f" % x


def print_peers(text, chart):
    """The peer table, the peers left out, and the chart's data."""
    print()
    print("cwrt native against its peers, same run (ratio: the best peer's figure against "
          "cwrt's, above 1 where cwrt is ahead)")
    print("%-38s %-5s %9s %9s %9s %9s %6s  %-8s %s"
          % ("workload", "unit", "cwrt", "go", "tokio", "libuv", "ratio", "target", ""))
    lines = []
    for label, unit, cwrt, figures, lower, target, judge in peer_rows(text):
        r = best_ratio(cwrt, figures, lower, judge)
        print("%-38s %-5s %9s %9s %9s %9s %6s  %-8s %s"
              % (label, unit, fig(cwrt), fig(figures["go"]), fig(figures["tokio"]),
                 fig(figures["libuv"]), fmt(r), "-" if target is None else ">= %.1f" % target,
                 "" if target is None else verdict(r, target, False)))
        if r is not None:
            lines.append('"%s" %.4f %s' % (label, r, "NaN" if target is None else target))
    for m in re.finditer(r"^peer (\S+) (missing|\S+: skipped): (.*)$", text, re.M):
        print("peer %s %s: %s" % m.groups())
    if chart:
        with open(chart, "w") as f:
            f.write("# label ratio target (bench/summary.py)\n")
            f.write("\n".join(lines) + "\n")


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--chart"):
        sys.exit("usage: summary.py RESULTS.txt [--chart DATA]")
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
    print_peers(text, sys.argv[3] if len(sys.argv) == 4 else None)


if __name__ == "__main__":
    main()
