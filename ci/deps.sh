#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Install the Debian packages the build and tests need, once: idempotent, and
# quiet when everything is there. As root it runs apt-get; otherwise it
# prints the command to run.
#   sh ci/deps.sh            what `make check` and `make certify` need
#   sh ci/deps.sh fuzz       also the fuzzers (clang's libFuzzer, AFL++)
#   sh ci/deps.sh coverage   also gcovr
#   sh ci/deps.sh lint       also clang-tidy and cppcheck
#   sh ci/deps.sh bench      also the benchmarks' baselines and peers (libuv, Go,
#                            tokio from Debian's crate directory, gnuplot)
#   sh ci/deps.sh flake      also stress-ng (make flake-check)
#   sh ci/deps.sh browser    also chromium, to render the --html report headless
#   sh ci/deps.sh cross      also the aarch64 and s390x cross compilers, their
#                            libraries (Debian multiarch) and qemu-user-static
set -eu

pkgs="make gcc clang libclang-rt-14-dev pkg-config check libssl-dev libjansson-dev liburing-dev valgrind python3-prometheus-client python3-jsonschema python3-junitparser curl graphviz"
for extra in "$@"; do
  case "$extra" in
    fuzz) pkgs="$pkgs clang libclang-rt-14-dev afl++" ;;
    coverage) pkgs="$pkgs gcovr" ;;
    lint) pkgs="$pkgs clang-tidy cppcheck clang-format" ;;
    bench) pkgs="$pkgs time libuv1-dev golang-go librust-tokio-dev gnuplot-nox" ;;
    flake) pkgs="$pkgs stress-ng" ;;
    browser) pkgs="$pkgs chromium" ;;
    cross) foreign="arm64 s390x"
      pkgs="$pkgs qemu-user-static gcc-aarch64-linux-gnu gcc-s390x-linux-gnu"
      pkgs="$pkgs libc6-dev-arm64-cross libc6-dev-s390x-cross"
      for a in $foreign; do
        pkgs="$pkgs libc6:$a check:$a libsubunit-dev:$a libjansson-dev:$a"
      done ;;
    *) echo "ci/deps.sh: unknown group '$extra'" >&2; exit 2 ;;
  esac
done

# A foreign architecture's packages are only known once dpkg accepts it and
# apt has read its lists, so a new one forces the update below.
added=""
for a in ${foreign:-}; do
  dpkg --print-foreign-architectures | grep -qx "$a" && continue
  if [ "$(id -u)" -ne 0 ]; then
    echo "run as root: dpkg --add-architecture $a" >&2; exit 1
  fi
  dpkg --add-architecture "$a"; added=yes
done

# The Rust backend of examples/rust/ builds with any cargo: Debian's where
# none is on the PATH (a rustup install counts).
command -v cargo > /dev/null 2>&1 || pkgs="$pkgs cargo"

missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# OpenSSL for the foreign architectures is unpacked, not installed: its
# packages are Multi-Arch: same, so dpkg wants one version for every
# architecture, and bookworm-security (which updates amd64 and arm64)
# publishes no s390x. An unpacked copy under $CROSS_ROOT/<arch> needs no
# matching version; the cross build links it there, with an rpath.
CROSS_ROOT=/opt/cwrt-cross
unpack=""
for a in ${foreign:-}; do
  [ -f "$CROSS_ROOT/$a/usr/include/openssl/evp.h" ] || unpack="$unpack $a"
done

[ -z "$missing" ] && [ -z "$added" ] && [ -z "$unpack" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages:$missing${unpack:+ (and openssl unpacked for$unpack)}"
  echo "install them with: sudo sh ci/deps.sh $*"
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ -n "$added" ] || [ -n "$missing" ]; then
  echo "installing:$missing"
  apt-get update -qq
fi
if [ -n "$missing" ]; then
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
fi
for a in $unpack; do
  tmp=$(mktemp -d) && chmod 755 "$tmp"
  (cd "$tmp" && apt-get download -qq "libssl-dev:$a" "libssl3:$a")
  mkdir -p "$CROSS_ROOT/$a"
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$CROSS_ROOT/$a"; done
  rm -rf "$tmp"
  echo "unpacked openssl for $a in $CROSS_ROOT/$a"
done
