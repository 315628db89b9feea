#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The layers of reference/ (reference/README.md draws them), checked twice:
# every #include "folder/..." of a file, and every symbol an object file of
# a folder takes from another folder's objects (nm), must be one its layer
# may use. Fails on the first kind of crossing it finds, naming each.
#
#   sh ci/layers.sh [OBJDIR]    OBJDIR: build/release/obj (made if missing)
#
# The one table of layers, lowest first: for each folder of reference/, the
# folders it may use, the core's headers it may include (and so the core's
# functions it may call: those the headers declare), and whether it may
# include the reference's own public headers (include/cwrt/, which declare
# the entry points of the backends and of cwrt/). A folder missing from the
# table fails the check. core/internal.h is the core's own; tests/ are the
# unit tests, which look inside. BACKEND stands for each backend of
# reference/cwrt/registry.h (one row each; a backend never uses another),
# BACKENDS for all of them.
LAYERS='
core      -                                            ext.h sched.h internal.h coro.h list.h  no
buffers   -                                            ext.h list.h                            no
metrics   buffers                                      ext.h list.h                            no
storage   buffers metrics                              ext.h list.h                            no
network   buffers metrics                              ext.h list.h                            no
BACKEND   buffers metrics storage network              ext.h sched.h coro.h list.h             yes
cwrt      buffers metrics storage network BACKENDS     ext.h sched.h coro.h list.h             yes
parallel  -                                            -                                       no
ratelimit -                                            -                                       no
tests     buffers metrics storage network BACKENDS cwrt ext.h sched.h internal.h coro.h list.h yes
'
set -eu
cd "$(dirname "$0")/.."
backends=$(sed -n 's/^ *X(\([a-z0-9_]*\)).*/\1/p' reference/cwrt/registry.h | tr '\n' ' ')
LAYERS=$(echo "$LAYERS" | awk -v list="$backends" '
    BEGIN { n = split(list, b, " ") }
    { gsub(/BACKENDS/, list) }
    $1 == "BACKEND" { for (i = 1; i <= n; i++) { $1 = b[i]; print } next }
    { print }')
obj=${1:-build/release/obj}
[ -d "$obj/reference" ] || make -s libs >/dev/null

# A row of the table split into its three parts: folders, core headers,
# and yes/no for include/cwrt/. "?" when the folder has no row.
row() {
    echo "$LAYERS" | awk -v f="$1" '$1 == f {
        uses = ""; hdrs = ""
        for (i = 2; i < NF; i++)
            if ($i ~ /\.h$/) hdrs = hdrs " " $i
            else if ($i != "-") uses = uses " " $i
        print uses "|" hdrs "|" $NF; found = 1 }
        END { if (!found) print "?" }'
}
uses() { r=$(row "$1"); [ "$r" = "?" ] && echo "?" || echo "$r" | cut -d'|' -f1; }
core_headers() { row "$1" | cut -s -d'|' -f2; }
public_headers() { row "$1" | cut -s -d'|' -f3; }

folders=$(cd reference && ls -d */ | tr -d / | grep -v '^include$')
bad=0
fail() {
    echo "layers: $*" >&2
    bad=1
}

contains() { # word list
    case " $2 " in *" $1 "*) return 0 ;; esac
    return 1
}

# ---- Includes ---------------------------------------------------------------
for f in $folders; do
    allowed=$(uses "$f")
    [ "$allowed" = "?" ] && fail "reference/$f/ has no row in the table of ci/layers.sh"
    hdrs=$(core_headers "$f")
    public=$(public_headers "$f")
    for file in reference/"$f"/*.[chS]; do
        [ -e "$file" ] || continue
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" |
            while read -r inc; do
                dir=${inc%%/*}
                [ "$dir" = "$inc" ] && continue # same folder, no path
                [ "$dir" = cw ] && continue     # the interface
                [ "$dir" = "$f" ] && continue
                if [ "$dir" = cwrt ] && [ -f "reference/include/$inc" ]; then
                    [ "$public" = yes ] || echo "$file includes $inc"
                elif [ "$dir" = core ]; then
                    contains "${inc#core/}" "$hdrs" || echo "$file includes $inc"
                else
                    contains "$dir" "$allowed" || echo "$file includes $inc"
                fi
            done
    done
done >"${TMPDIR:-/tmp}/layers.$$"
if [ -s "${TMPDIR:-/tmp}/layers.$$" ]; then
    while read -r line; do fail "$line"; done <"${TMPDIR:-/tmp}/layers.$$"
fi

# ---- Symbols ----------------------------------------------------------------
# The objects of a folder's sources (a stale object of a removed file is not
# one of them).
objects() {
    for src in reference/"$1"/*.c reference/"$1"/*.S; do
        [ -e "$src" ] || continue
        o="$obj/${src%.*}.o"
        [ -e "$o" ] && echo "$o"
    done
}

# Every global symbol of every object, as "folder object type symbol", from
# one nm: a process per object took most of the check's time.
for f in $folders; do objects "$f"; done >"${TMPDIR:-/tmp}/layers-objs.$$"
# shellcheck disable=SC2046
nm -A -g $(cat "${TMPDIR:-/tmp}/layers-objs.$$") 2>/dev/null |
    awk -v obj="$obj/" '{
        file = $1; sub(/:$/, "", file); o = substr(file, length(obj) + 1)
        split(o, part, "/"); print part[2], o, $(NF - 1), $NF
    }' >"${TMPDIR:-/tmp}/layers-nm.$$"

# Which folder defines each global symbol.
awk '$3 != "U" { print $4, $1 }' "${TMPDIR:-/tmp}/layers-nm.$$" | sort -u >"${TMPDIR:-/tmp}/layers-defs.$$"

# The core's functions each folder may call: those its core headers
# declare, as "folder symbol".
declared() {
    cat "$@" | tr -c 'A-Za-z0-9_' '\n' | grep '^cw_' | sort -u
}
for f in $folders; do
    h=$(core_headers "$f")
    [ -n "$h" ] || continue
    # shellcheck disable=SC2046
    declared $(for x in $h; do echo "reference/core/$x"; done) | sed "s/^/$f /"
done >"${TMPDIR:-/tmp}/layers-core.$$"

# Every symbol an object takes from another folder, as "folder object
# symbol owner", judged in one awk pass.
awk '$3 == "U" { print $4, $1, $2 }' "${TMPDIR:-/tmp}/layers-nm.$$" | sort -u |
    join - "${TMPDIR:-/tmp}/layers-defs.$$" | awk '$4 != $2 { print $2, $3, $1, $4 }' \
    >"${TMPDIR:-/tmp}/layers-uses.$$"
for f in $folders; do printf '%s %s\n' "$f" "$(uses "$f")"; done >"${TMPDIR:-/tmp}/layers-allowed.$$"
awk -v core="${TMPDIR:-/tmp}/layers-core.$$" -v allowed="${TMPDIR:-/tmp}/layers-allowed.$$" '
    BEGIN {
        while ((getline line < core) > 0) { split(line, w, " "); callable[w[1], w[2]] = 1 }
        while ((getline line < allowed) > 0) {
            n = split(line, w, " ")
            for (i = 2; i <= n; i++) may[w[1], w[i]] = 1
        }
    }
    {
        f = $1; o = $2; sym = $3; owner = $4
        if (owner == "core") {
            if (!((f, sym) in callable)) print o " uses " sym " of core/, not in its interface"
        } else if (!((f, owner) in may)) {
            print o " uses " sym " of " owner "/"
        }
    }' "${TMPDIR:-/tmp}/layers-uses.$$" >"${TMPDIR:-/tmp}/layers.$$"
if [ -s "${TMPDIR:-/tmp}/layers.$$" ]; then
    while read -r line; do fail "$line"; done <"${TMPDIR:-/tmp}/layers.$$"
fi
rm -f "${TMPDIR:-/tmp}"/layers*.$$

[ "$bad" = 0 ] || exit 1
echo "layers: every include and symbol of reference/ within its layer"
