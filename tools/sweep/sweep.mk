# SPDX-License-Identifier: Apache-2.0 OR MIT
# cw-sweep (tools/sweep/): a test program run once per seed, in parallel,
# sharded across machines. Included by the top Makefile.

SWEEP_SRC := tools/sweep/sweep.c tools/sweep/run.c tools/sweep/report.c
SWEEP_OBJ := $(SWEEP_SRC:%.c=$(B)/obj/%.o)

$(B)/bin/cw-sweep: $(SWEEP_OBJ)
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) -o $@ $^ $(SAN_LD)

# The sweep's own test: outcomes, reports and the sharding arithmetic.
sweep-check: $(B)/bin/cw-sweep $(B)/bin/sweep-example
	@sh tools/sweep/check.sh $(B)/bin/cw-sweep $(B)/bin/sweep-example $(B)/sweep-check $(PYTHON)

# A simulation test with a seed-dependent bug, the sweep's example.
$(B)/bin/sweep-example: tools/sweep/example.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(LIBS)

.PHONY: sweep-check

# 10,000 seeds of the example, with the report kept in $(B)/sweep-demo.
sweep-demo: $(B)/bin/cw-sweep $(B)/bin/sweep-example
	@mkdir -p $(B)/sweep-demo
	@$(B)/bin/cw-sweep --seeds 0..10000 --timeout 10 --json $(B)/sweep-demo/report.json \
	  --logs $(B)/sweep-demo/logs -- $(B)/bin/sweep-example | tee $(B)/sweep-demo/report.txt; true

.PHONY: sweep-demo
