# SPDX-License-Identifier: Apache-2.0 OR MIT
# examples/rust/rust.mk - the Rust backend of examples/rust/, included by
# the top Makefile.
#
#   make rust-run    build it with cargo (offline: standard library only),
#                    check its FFI layouts against spec/include, and certify
#                    it for every profile it declares
#
# It is a second implementation written from spec/ alone: this file builds
# it and certifies it, and nothing of reference/ reaches it. Where no cargo
# can be had, the stage says so in one line and passes.

RUST_DIR := examples/rust
RUST_SO := $(RUST_DIR)/target/release/libcwrt_rust.so

.PHONY: rust-run

rust-run: $(B)/bin/cw-conformance
	@if ! command -v cargo > /dev/null 2>&1; then \
	  echo "== rust: no cargo on this machine (sh ci/deps.sh installs Debian's): the Rust backend is not certified"; \
	  exit 0; fi; \
	echo "== conformance on the Rust backend ($$(rustc --version))"; \
	if grep -rlE 'reference/|cwrt/cwrt\.h|libcwrt|-lcwrt' $(RUST_DIR)/src $(RUST_DIR)/abi-check \
	  $(RUST_DIR)/Cargo.toml; then echo "rust: the files above reach into reference/"; exit 1; fi; \
	cargo build --release --offline --quiet --manifest-path $(RUST_DIR)/Cargo.toml || exit 1; \
	sh $(RUST_DIR)/abi-check/run.sh $(abspath spec/include) || exit 1; \
	mkdir -p $(B)/reports; \
	$(B)/bin/cw-conformance --backend $(RUST_SO) --certificate --json $(B)/reports/rust.json \
	  > $(B)/reports/rust.txt 2>&1 || { cat $(B)/reports/rust.txt; exit 1; }; \
	sed -n '/====/,/====/p' $(B)/reports/rust.txt; \
	$(PYTHON) ci/check-reports.py --expect CONFORMANT $(B)/reports/rust.json
