# SPDX-License-Identifier: Apache-2.0 OR MIT
# Traces of deterministic runs (reference/cwrt/trace.c): an example run
# written as a trace and checked (make trace-check, in make check).

$(B)/bin/trace-example: tools/trace/example.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(LIBS)

trace-check: $(B)/bin/trace-example
	@mkdir -p $(B)/trace
	@$(B)/bin/trace-example $(B)/trace/example.json 1
	@$(PYTHON) tools/trace/check.py $(B)/trace/example.json

.PHONY: trace-check
