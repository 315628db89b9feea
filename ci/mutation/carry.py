#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Carry ci/mutation/equivalent.txt over a change that moves no token.

An entry names its mutant by the text of its line, so reformatting a file
(make format) would leave every entry of it stale though no mutant changed.
Given the tree as it was (a git revision) and as it is, this pairs the
mutants of each file in order, requires each pair to be the same mutation
of the same token, and rewrites the entries of the old ones as the new.
A file whose mutants do not pair up (a real edit) is left alone and named.

usage: carry.py REV        (from the top of the tree)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mutants  # noqa: E402
import run  # noqa: E402


def tree_at(rev, into):
    """The files mutants.py reads, as they were at `rev`, under `into`."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev] + list(mutants.ROOT_DIRS),
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)


def by_file(population):
    files = {}
    for m in population:
        files.setdefault(m["file"], []).append(m)
    return files


def pairing(old, new):
    """old id -> new id for the files whose mutants pair up; and the rest."""
    ids, unpaired = {}, []
    old_files, new_files = by_file(old), by_file(new)
    for path, before in old_files.items():
        after = new_files.get(path, [])
        # The mutation is described with its whitespace folded, so it is
        # the same text however the file is laid out.
        same = len(before) == len(after) and all(
            (a["mutation"], a["operator"]) == (b["mutation"], b["operator"])
            for a, b in zip(before, after))
        if not same:
            unpaired.append(path)
            continue
        ids.update({a["id"]: b["id"] for a, b in zip(before, after)})
    return ids, unpaired


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    with tempfile.TemporaryDirectory() as old_root:
        tree_at(sys.argv[1], old_root)
        ids, unpaired = pairing(mutants.all_mutants(old_root), mutants.all_mutants(ROOT))
    listed = run.load_equivalent()
    moved = 0
    with open(run.EQUIVALENT) as f:
        lines = f.readlines()
    out = []
    for line in lines:
        if line.strip() and not line.startswith("#"):
            # file, line text, mutation (the id), then category and reason
            parts = line.rstrip("\n").split("\t")
            ident = "\t".join(parts[:-2])
            if ident in ids and ids[ident] != ident:
                line = "%s\t%s\t%s\n" % (ids[ident], parts[-2], parts[-1])
                moved += 1
        out.append(line)
    with open(run.EQUIVALENT, "w") as f:
        f.writelines(out)
    print("carry: %d of %d entries rewritten" % (moved, len(listed)))
    for path in unpaired:
        print("carry: %s: its mutants changed, its entries left as they were" % path)


if __name__ == "__main__":
    main()
