#!/bin/sh
# Install the Debian packages the build and tests need, once: idempotent, and
# quiet when everything is there. As root it runs apt-get; otherwise it
# prints the command to run.
#   sh ci/deps.sh            what `make check` and `make certify` need
#   sh ci/deps.sh fuzz       also the fuzzers (clang's libFuzzer, AFL++)
#   sh ci/deps.sh coverage   also gcovr
#   sh ci/deps.sh lint       also clang-tidy and cppcheck
set -eu

pkgs="make gcc clang libclang-rt-14-dev pkg-config check libssl-dev libjansson-dev valgrind python3-prometheus-client python3-jsonschema python3-junitparser curl"
for extra in "$@"; do
  case "$extra" in
    fuzz) pkgs="$pkgs clang libclang-rt-14-dev afl++" ;;
    coverage) pkgs="$pkgs gcovr" ;;
    lint) pkgs="$pkgs clang-tidy cppcheck clang-format" ;;
    bench) pkgs="$pkgs time" ;;
    *) echo "ci/deps.sh: unknown group '$extra'" >&2; exit 2 ;;
  esac
done

missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages:$missing"
  echo "install them with: sudo apt-get install -y$missing"
  exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
