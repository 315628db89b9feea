#!/bin/bash -eu
# SPDX-License-Identifier: Apache-2.0 OR MIT
# ClusterFuzzLite runs the build script of this folder; the one script,
# shared with OSS-Fuzz, is fuzz/oss-fuzz/build.sh in the sources.
exec "${CWRT_ROOT:-$SRC/cwrt}/fuzz/oss-fuzz/build.sh" "$@"
