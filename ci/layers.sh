#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The layers of reference/ (reference/README.md draws them), checked twice:
# every #include "folder/..." of a file, and every symbol an object file of
# a folder takes from another folder's objects (nm), must be one its layer
# may use. Fails on the first kind of crossing it finds, naming each.
#
#   sh ci/layers.sh [OBJDIR]    OBJDIR: build/release/obj (made if missing)
#
# The rules, lowest layer first:
#   core           nothing else of reference/
#   buffers        core through core/ext.h only
#   metrics        the above
#   storage        the above
#   network        buffers, metrics, core/ext.h
#   deterministic,
#   native         every subsystem, and the core through core/ext.h and
#                  core/sched.h (core/coro.h, core/list.h, which they include)
#   cwrt           everything: the registry of backends and derived tables
#   parallel,
#   ratelimit      the public interface only (cw/*.h)
# Of the core, a subsystem may call what ext.h declares; a backend what
# ext.h and sched.h (and coro.h) declare. core/internal.h is the core's own.
set -eu
cd "$(dirname "$0")/.."
obj=${1:-build/release/obj}
[ -d "$obj/reference" ] || make -s libs >/dev/null

# The folders a folder may use (besides itself and the core).
uses() {
    case $1 in
    core | parallel | ratelimit) echo "" ;;
    buffers) echo "" ;;
    metrics) echo "buffers" ;;
    storage) echo "buffers metrics" ;;
    network) echo "buffers metrics" ;;
    deterministic | native) echo "buffers metrics storage network" ;;
    cwrt) echo "buffers metrics storage network deterministic native" ;;
    tests) echo "buffers metrics storage network deterministic native cwrt" ;;
    *) echo "?" ;;
    esac
}

# The core's headers a folder may include.
core_headers() {
    case $1 in
    core | tests) echo "ext.h sched.h internal.h coro.h list.h" ;;
    buffers | metrics | storage | network) echo "ext.h list.h" ;;
    deterministic | native) echo "ext.h sched.h coro.h list.h" ;;
    cwrt) echo "ext.h sched.h coro.h list.h" ;;
    *) echo "" ;;
    esac
}

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
    [ "$allowed" = "?" ] && fail "reference/$f/ has no declared layer (ci/layers.sh)"
    hdrs=$(core_headers "$f")
    for file in reference/"$f"/*.[chS]; do
        [ -e "$file" ] || continue
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" |
            while read -r inc; do
                dir=${inc%%/*}
                [ "$dir" = "$inc" ] && continue # same folder, no path
                case $dir in cw | cwrt) [ "$dir" = cw ] || [ -f "reference/include/$inc" ] && continue ;; esac
                [ "$dir" = "$f" ] && continue
                if [ "$dir" = core ]; then
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

# The functions of the core a subsystem, or a backend, may call.
declared() {
    cat "$@" | tr -c 'A-Za-z0-9_' '\n' | grep '^cw_' | sort -u
}
declared reference/core/ext.h >"${TMPDIR:-/tmp}/layers-ext.$$"
declared reference/core/ext.h reference/core/sched.h reference/core/coro.h \
    reference/core/list.h >"${TMPDIR:-/tmp}/layers-sched.$$"

# Every symbol an object takes from another folder, as "folder object
# symbol owner", judged in one awk pass.
awk '$3 == "U" && $1 != "tests" { print $4, $1, $2 }' "${TMPDIR:-/tmp}/layers-nm.$$" | sort -u |
    join - "${TMPDIR:-/tmp}/layers-defs.$$" | awk '$4 != $2 { print $2, $3, $1, $4 }' \
    >"${TMPDIR:-/tmp}/layers-uses.$$"
for f in $folders; do printf '%s %s\n' "$f" "$(uses "$f")"; done >"${TMPDIR:-/tmp}/layers-allowed.$$"
awk -v ext="${TMPDIR:-/tmp}/layers-ext.$$" -v sched="${TMPDIR:-/tmp}/layers-sched.$$" \
    -v allowed="${TMPDIR:-/tmp}/layers-allowed.$$" '
    BEGIN {
        while ((getline s < ext) > 0) in_ext[s] = 1
        while ((getline s < sched) > 0) in_sched[s] = 1
        while ((getline line < allowed) > 0) {
            n = split(line, w, " ")
            for (i = 2; i <= n; i++) may[w[1], w[i]] = 1
        }
    }
    {
        f = $1; o = $2; sym = $3; owner = $4
        if (owner == "core") {
            if (f == "cwrt") next
            if (f ~ /^(buffers|metrics|storage|network)$/) ok = (sym in in_ext)
            else if (f ~ /^(deterministic|native)$/) ok = (sym in in_sched)
            else ok = 0
            if (!ok) print o " uses " sym " of core/, not in its interface"
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
