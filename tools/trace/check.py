#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Validate a Chrome Trace Event file written by cw_trace (cwrt/trace.h):
it parses as JSON; every "B" has its "E" on the same track, never nested;
timestamps never go back on a track; every track that has slices is named;
instants carry a name. Exit 0, or 1 with the first problem.

    check.py TRACE.json
"""
import json
import sys


def main(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    assert events, "no events"
    open_slice, last_ts, named, slices, instants = {}, {}, set(), 0, 0
    for n, e in enumerate(events):
        ph, tid = e["ph"], e.get("tid")
        if ph == "M":
            assert e["name"] == "thread_name" and e["args"]["name"], e
            named.add(tid)
            continue
        ts = e["ts"]
        assert ts >= last_ts.get(tid, float("-inf")), "event %d goes back in time on track %s" % (n, tid)
        last_ts[tid] = ts
        if ph == "B":
            assert not open_slice.get(tid), "event %d: a slice begins inside another on %s" % (n, tid)
            open_slice[tid] = True
            slices += 1
        elif ph == "E":
            assert open_slice.get(tid), "event %d: an end with no begin on %s" % (n, tid)
            open_slice[tid] = False
        elif ph == "i":
            assert e["name"], e
            instants += 1
        else:
            raise AssertionError("event %d: unknown phase %r" % (n, ph))
    left = [t for t, o in open_slice.items() if o]
    assert not left, "slices never ended on %s" % left
    unnamed = set(open_slice) - named
    assert not unnamed, "tracks without a name: %s" % sorted(unnamed)
    print("trace: %s: %d tracks, %d slices, %d instants, every slice closed, time monotone per track"
          % (path, len(named), slices, instants))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except (AssertionError, KeyError, ValueError) as e:
        sys.exit("trace: %s: %s" % (sys.argv[1], e))
