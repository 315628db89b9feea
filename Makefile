# cwrt - build, test and certify.
#
#   make            libraries (static and shared) and cw-conformance
#   make check      every test: unit tests, the suite on each backend (plain and
#                   under ASan+UBSan), fuzz corpus replay, requirement coverage
#   make certify    run the suite against every reference backend, print certificates
#   make negative   certify every wrong backend of conformance/mutants/: all must be refused
#   make fuzz       build the fuzz targets for libFuzzer and AFL++ (FUZZ_SECONDS to run)
#   make coverage   gcovr reports (HTML, JSON, Cobertura) for reference/
#   make bench      the benchmarks in bench/
#   make lint       clang-tidy and cppcheck
#   make install PREFIX=/usr/local
#
# VARIANT selects a build flavour in its own directory: release (default),
# asan (ASan+UBSan), tsan (ThreadSanitizer, with clang), coverage.

CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif
PREFIX ?= /usr/local
VARIANT ?= release
B := build/$(VARIANT)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-function
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g -fPIC $(WARN) -Ispec/include -Ireference -Ireference/include -Iconformance
OPT := -O2
ifeq ($(VARIANT),asan)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_LD := -fsanitize=address,undefined
endif
ifeq ($(VARIANT),tsan)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=thread
SAN_LD := -fsanitize=thread
endif
ifeq ($(VARIANT),coverage)
OPT := -O0 --coverage -fprofile-update=atomic
SAN_LD := --coverage
endif
ALL_CFLAGS := $(CFLAGS_BASE) $(OPT) $(CFLAGS)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
LIBS := -lcrypto -lpthread -ldl

LIB_SRC := $(sort $(wildcard reference/core/*.c reference/deterministic/*.c reference/native/*.c reference/buffers/*.c reference/metrics/*.c reference/parallel/*.c reference/ratelimit/*.c reference/storage/*.c reference/network/*.c))
LIB_ASM := $(sort $(wildcard reference/core/*.S))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o) $(LIB_ASM:%.S=$(B)/obj/%.o)
CWC_SRC := $(sort $(wildcard conformance/harness/*.c conformance/cases/*.c))
CWC_OBJ := $(CWC_SRC:%.c=$(B)/obj/%.o)
UNIT_SRC := $(sort $(wildcard reference/tests/test_*.c))
UNIT_BIN := $(UNIT_SRC:reference/tests/%.c=$(B)/bin/%)
SPEC_MD := $(sort $(wildcard spec/*.md))

.PHONY: all libs check certify fuzz coverage bench lint install clean deps \
        unit conformance-run plugin-run negative requirements format valgrind

all: libs $(B)/bin/cw-conformance

libs: $(B)/lib/libcwrt.a $(B)/lib/libcwrt.so $(B)/lib/libcwconformance.a

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -c $< -o $@

# The suite's list of requirements comes from the spec itself, so a new
# numbered rule shows up in --requirements as uncovered until a case names it.
$(B)/gen/reqs.inc: $(SPEC_MD) ci/extract-reqs.sh
	@mkdir -p $(dir $@)
	sh ci/extract-reqs.sh $(SPEC_MD) > $@

$(B)/obj/conformance/harness/report.o: $(B)/gen/reqs.inc
$(B)/obj/conformance/%.o: ALL_CFLAGS += -I$(B)/gen -DCWC_WITH_REFERENCE

$(B)/lib/libcwrt.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/lib/libcwrt.so: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) -shared -o $@ $^ $(SAN_LD) $(LIBS)

# Cases register themselves from constructors, so the suite is one
# relocatable object: linking it pulls in every case.
$(B)/lib/libcwconformance.a: $(CWC_OBJ)
	@mkdir -p $(dir $@)
	ld -r -o $(B)/obj/cwconformance.o $^
	rm -f $@ && ar rcs $@ $(B)/obj/cwconformance.o

$(B)/bin/cw-conformance: $(CWC_OBJ) $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) -o $@ $(CWC_OBJ) $(B)/lib/libcwrt.a $(SAN_LD) $(CHECK_LIBS) $(LIBS)

# A backend loaded the way a third party's is: a shared object exporting
# cw_backend_entry (here wrapping the reference, linked in statically).
$(B)/lib/cwrt-plugin.so: examples/plugin.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -shared -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(LIBS)

# The negative corpus: deliberately wrong backends, each the reference
# with entries replaced through a derived table (conformance/mutants/).
MUTANT_SRC := $(sort $(filter-out %/mutant.h,$(wildcard conformance/mutants/*.c)))
MUTANT_SO := $(MUTANT_SRC:conformance/mutants/%.c=$(B)/mutants/%.so)

$(B)/mutants/%.so: conformance/mutants/%.c conformance/mutants/mutant.h $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -DCWM_NAME='"$*"' -shared -o $@ $< \
	  $(B)/lib/libcwrt.a $(SAN_LD) -lm $(LIBS)

# The reference with one entry replaced, through a derived table.
$(B)/lib/cwrt-wrap.so: examples/wrap.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -shared -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(LIBS)

$(B)/bin/test_%: reference/tests/test_%.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(CHECK_LIBS) $(LIBS)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# ---- Tests ------------------------------------------------------------------

deps:
	@sh ci/deps.sh

BACKENDS := deterministic native
# Debian's python, where python3-prometheus-client is installed.
PYTHON := /usr/bin/python3

unit: $(UNIT_BIN)
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done

# Every metrics text the suite encodes is kept in $(B)/openmetrics and read
# back by an independent OpenMetrics parser.
conformance-run: $(B)/bin/cw-conformance
	@mkdir -p $(B)/reports
	@rm -rf $(B)/openmetrics && mkdir -p $(B)/openmetrics
	@for b in $(BACKENDS); do \
	  echo "== conformance on $$b ($(VARIANT))"; \
	  CWC_METRICS_DIR=$(B)/openmetrics $(B)/bin/cw-conformance --backend $$b \
	    --json $(B)/reports/$$b.json --tap $(B)/reports/$$b.tap --xml $(B)/reports/$$b.xml || exit 1; \
	done
	@$(PYTHON) ci/openmetrics.py $(B)/openmetrics

plugin-run: $(B)/bin/cw-conformance $(B)/lib/cwrt-plugin.so $(B)/lib/cwrt-wrap.so
	@mkdir -p $(B)/reports
	@echo "== conformance on a backend loaded from a shared object"
	@CWRT_PLUGIN_BACKEND=deterministic $(B)/bin/cw-conformance \
	  --backend $(B)/lib/cwrt-plugin.so --json $(B)/reports/plugin.json
	@for b in $(BACKENDS); do \
	  echo "== conformance on $$b wrapped by a derived table"; \
	  CWRT_PLUGIN_BACKEND=$$b $(B)/bin/cw-conformance --backend $(B)/lib/cwrt-wrap.so \
	    --json $(B)/reports/wrap-$$b.json || exit 1; \
	done

# Every wrong backend must be refused: NON-CONFORMANT, a named failing case.
NEGATIVE_JOBS ?= 2
negative: $(B)/bin/cw-conformance $(B)/lib/cwrt-wrap.so $(MUTANT_SO)
	@echo "== the negative corpus: every wrong backend refused"
	@sh ci/negative.sh $(B)/bin/cw-conformance $(B)/negative $(NEGATIVE_JOBS) \
	  $(B)/lib/cwrt-wrap.so $(MUTANT_SO)

requirements: $(B)/bin/cw-conformance
	@$(B)/bin/cw-conformance --requirements > $(B)/requirements.txt || \
	  { cat $(B)/requirements.txt; echo "spec requirements without a conformance case"; exit 1; }
	@echo "== every requirement of spec/ has a case ($$(wc -l < $(B)/requirements.txt) requirements)"

check: deps
	rm -f build/*/reports/*.json
	$(MAKE) all unit requirements conformance-run plugin-run negative
	$(MAKE) VARIANT=asan unit conformance-run
	$(MAKE) VARIANT=tsan CC=clang BACKENDS=native conformance-run
	$(MAKE) valgrind
	@$(MAKE) -s -C fuzz replay > build/fuzz-replay.txt || { cat build/fuzz-replay.txt; exit 1; }
	@cat build/fuzz-replay.txt
	@sh ci/summary.sh $$(sed -n 's/^fuzz replay: \([0-9]*\) passed.*/\1/p' build/fuzz-replay.txt)

# The suite on the deterministic backend under valgrind: each case's child
# process exits non-zero on any memory error or definite leak.
VALGRIND := valgrind -q --error-exitcode=9 --leak-check=full --show-leak-kinds=definite \
            --errors-for-leak-kinds=definite

valgrind: all
	@echo "== conformance on deterministic under valgrind"
	@$(VALGRIND) $(B)/bin/cw-conformance --backend deterministic

certify: deps all
	@mkdir -p $(B)/reports
	@for b in $(BACKENDS); do \
	  $(B)/bin/cw-conformance --backend $$b --certificate --json $(B)/reports/$$b.json \
	    --xml $(B)/reports/$$b.xml || exit 1; \
	done
	@echo "reports: $(B)/reports/"

fuzz:
	$(MAKE) -C fuzz all

coverage: deps
	$(MAKE) VARIANT=coverage all unit conformance-run
	$(MAKE) -C fuzz replay VARIANT=coverage
	sh coverage/report.sh build/coverage

bench: all
	$(MAKE) -C bench run

lint:
	sh ci/lint.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

install: all
	install -d $(DESTDIR)$(PREFIX)/include/cw $(DESTDIR)$(PREFIX)/include/cwrt \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 spec/include/cw/*.h $(DESTDIR)$(PREFIX)/include/cw/
	install -m 644 reference/include/cwrt/*.h $(DESTDIR)$(PREFIX)/include/cwrt/
	install -m 644 $(B)/lib/libcwrt.a $(B)/lib/libcwconformance.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/lib/libcwrt.so $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/bin/cw-conformance $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|g' ci/cwrt.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cwrt.pc

clean:
	rm -rf build
	$(MAKE) -C fuzz clean
