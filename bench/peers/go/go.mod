// SPDX-License-Identifier: Apache-2.0 OR MIT
// The Go peer of `make bench` (README.md): standard library only, so it
// builds with GOPROXY=off.
module cwrt/bench/peers/go

go 1.19
