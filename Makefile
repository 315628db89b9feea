# SPDX-License-Identifier: Apache-2.0 OR MIT
# cwrt - build, test and certify.
#
#   make            libraries (static and shared) and cw-conformance
#   make check      the tests before every commit (5 minutes on 2 cores): unit
#                   tests, the suite on each backend and the skeleton, reports,
#                   the kit, a sample of the negative corpus, fuzz corpus replay
#   make check-all  every test (what CI runs): make check, the whole negative
#                   corpus, ASan+UBSan, TSan, valgrind, allocation sweeps, the
#                   HTML report in chromium, the skeleton's coverage, a
#                   fresh clone following the README, cross-check
#   make certify    run the suite against every reference backend, print certificates
#   make negative   certify every wrong backend of conformance/mutants/: all must be refused
#   make cross-check the library and the suite built for aarch64 and s390x (big-endian),
#                   run under qemu-user: every golden digest equal to this host's
#   make fuzz       build the fuzz targets for libFuzzer and AFL++ (FUZZ_SECONDS to run)
#   make fuzz-ci    every fuzz target for CI_SECONDS (60) from the corpus in git; fails on a finding
#   make coverage   gcovr reports (HTML, JSON, Cobertura) for reference/
#   make bench      the benchmarks in bench/, and the native backend against
#                   Go, tokio and libuv (bench/peers/): a table and a chart
#   make flake-check correct backends certified under 4x CPU oversubscription,
#                   valgrind and TSan: no refusal allowed (FLAKE_N=10, FLAKE_ARGS="--jobs 2")
#   make lint       the layer check, clang-tidy and cppcheck
#   make layers     the layer check of reference/ alone (ci/layers.sh)
#   make mutation   the suite's power: mutants of reference/ it rejects, as three
#                   figures (release suite, sanitizer runs, equivalent); N=400 SEED=1
#                   JOBS=cores TIMEOUT=60, RERUN=1 for the last survivors, ASAN=1 TSAN=1
#                   VALGRIND_RUN=1 certify survivors again under each
#   make install PREFIX=/usr/local   (kit-check: install and use it as a third party)
#   make report-check   the harness's verdicts and reports, read back (--html,
#                   compare included); make html-browser renders the HTML
#                   report in headless chromium (in check-all)
#   make skeleton-run / skeleton-kit-check / skeleton-coverage
#                   the skeleton backend of examples/skeleton/ (its own README)
#
# VARIANT selects a build flavour in its own directory: release (default),
# asan (ASan+UBSan), tsan (ThreadSanitizer, with clang), coverage.

comma := ,
CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif
PREFIX ?= /usr/local
SUITE_VERSION := $(shell sed -n 's/^\#define CWC_SUITE_VERSION "\(.*\)"/\1/p' conformance/harness/report.h)
# Debian's python, where python3-prometheus-client, python3-jsonschema and
# python3-junitparser are installed.
PYTHON := /usr/bin/python3
VARIANT ?= release
B := build/$(VARIANT)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-function
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g -fPIC $(WARN) -Ispec/include -Ireference -Ireference/include -Iconformance -Iconformance/include
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
OPT := -O0 --coverage -fprofile-update=atomic -DCWC_COVERAGE
SAN_LD := --coverage
# The suite's binaries: conformance/harness/coverage_exit.c writes the
# counts of processes that end in _exit.
CWC_LD := -Wl,--wrap=_exit
endif
ALL_CFLAGS := $(CFLAGS_BASE) $(OPT) $(CFLAGS)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
# io_uring for file storage (reference/native/uring.c) where liburing is
# installed; without it (a cross build sets URING_LIBS empty) the native
# backend does its file I/O on threads alone.
URING_LIBS ?= $(shell pkg-config --libs liburing 2>/dev/null)
ALL_CFLAGS += $(if $(strip $(URING_LIBS)),-DCW_HAVE_LIBURING)
LIBS := -lcrypto -lpthread -ldl $(URING_LIBS)
JSON_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)

# The library's objects hide every symbol but those the installed headers
# declare with CW_EXTERN, and the shared library's symbol map says the same
# (ci/exports.sh checks that headers, map and library agree).
LIB_CFLAGS := -fvisibility=hidden
LIB_MAP := reference/libcwrt.map

# The configuration a build was made with: the compiler, its flags and the
# libraries found (liburing or not). Every object depends on this stamp,
# which is rewritten only when its text changes, so a build configured
# another way (a package installed or removed since, CC=clang) rebuilds
# everything it compiled, as the kernel's .cmd files and SQLite's
# configure make it do.
CONFIG_TEXT := $(CC) $(ALL_CFLAGS) | $(LIB_CFLAGS) | $(LIBS) | $(SAN_LD) $(CWC_LD)
CONFIG_STAMP := $(B)/config.stamp
$(CONFIG_STAMP): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(CONFIG_TEXT)' | cmp -s - $@ 2>/dev/null || \
	  { printf '%s\n' '$(CONFIG_TEXT)' > $@; echo "  CONFIG $(VARIANT): $(if $(strip $(URING_LIBS)),with,without) liburing"; }
FORCE:

# The reference's backends, from their one list (reference/cwrt/registry.h):
# each is a folder of reference/, and every folder but tests/ is library.
BACKENDS := $(shell sed -n 's/^ *X(\([a-z0-9_]*\)).*/\1/p' reference/cwrt/registry.h)
LIB_SRC := $(sort $(filter-out reference/tests/%,$(wildcard reference/*/*.c)))
LIB_ASM := $(sort $(filter-out reference/tests/%,$(wildcard reference/*/*.S)))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o) $(LIB_ASM:%.S=$(B)/obj/%.o)
$(LIB_OBJ): ALL_CFLAGS += $(LIB_CFLAGS)
CWC_SRC := $(sort $(wildcard conformance/harness/*.c conformance/cases/*.c))
CWC_OBJ := $(CWC_SRC:%.c=$(B)/obj/%.o)
# The library is the suite without main(): a third party's binary brings its own.
CWC_LIB_OBJ := $(filter-out %/harness/main.o,$(CWC_OBJ))
UNIT_SRC := $(sort $(wildcard reference/tests/test_*.c))
UNIT_BIN := $(UNIT_SRC:reference/tests/%.c=$(B)/bin/%)
SPEC_MD := $(sort $(wildcard spec/*.md))
SPEC_H := $(sort $(wildcard spec/include/cw/*.h))

.PHONY: FORCE flake-check all libs check check-all certify certify-run fuzz-replay fuzz-candidates spdx config-check fresh-check negative-sample fuzz coverage bench lint install clean deps \
        unit conformance-run plugin-run negative requirements format valgrind report-check \
        kit-check cross-check layers exports-check format-check mutation mutation-selftest alloc-sweep alloc-sweep-full fuzz-ci \
        oss-fuzz-check html-browser

all: libs $(B)/bin/cw-conformance $(B)/bin/cw-sweep $(B)/bin/cw-conformance-coverage

# The shared library's version follows the ABI: the SONAME changes with its
# major version, as a loader refuses another major (spec/10-backend.md).
ABI_MAJOR := 1
LIB_VERSION := 1.2.0
SONAME := libcwrt.so.$(ABI_MAJOR)

libs: $(B)/lib/libcwrt.a $(B)/lib/libcwrt.so $(B)/lib/libcwconformance.a

$(B)/obj/%.o: %.c $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/%.o: %.S $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -c $< -o $@

# The suite's list of requirements comes from the spec itself, so a new
# numbered rule shows up in --requirements as uncovered until a case names it.
$(B)/gen/reqs.inc: $(SPEC_MD) ci/extract-reqs.sh
	@mkdir -p $(dir $@)
	sh ci/extract-reqs.sh $(SPEC_MD) > $@

# The spec's version and digest and the suite's measured power, quoted by
# every certificate (ci/suite-info.py says which bytes the digest covers).
$(B)/gen/suiteinfo.inc: $(SPEC_MD) $(SPEC_H) ci/suite-info.py $(wildcard conformance/mutation-score.json)
	@mkdir -p $(dir $@)
	$(PYTHON) ci/suite-info.py spec $(wildcard conformance/mutation-score.json) > $@.tmp && mv $@.tmp $@

# Each requirement's profile, from the profile table of spec/10-backend.md.
$(B)/gen/req-profiles.inc: spec/10-backend.md $(B)/gen/reqs.inc ci/req-profiles.py
	$(PYTHON) ci/req-profiles.py spec/10-backend.md $(B)/gen/reqs.inc > $@.tmp && mv $@.tmp $@

$(B)/obj/conformance/harness/requirements.o: $(B)/gen/reqs.inc
$(B)/obj/conformance/harness/profile.o: $(B)/gen/req-profiles.inc
$(B)/obj/conformance/harness/suiteinfo.o: $(B)/gen/suiteinfo.inc
$(B)/obj/conformance/%.o: ALL_CFLAGS += -I$(B)/gen -DCWC_WITH_REFERENCE
# --help names the reference's backends.
$(B)/obj/conformance/harness/cli.o: ALL_CFLAGS += -DCWC_REFERENCE_BACKENDS='"$(subst $() ,$(comma) ,$(BACKENDS))"'
$(B)/obj/conformance/harness/cli.o: reference/cwrt/registry.h

$(B)/lib/libcwrt.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/lib/libcwrt.so.$(LIB_VERSION): $(LIB_OBJ) $(LIB_MAP)
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(LIB_MAP) \
	  -o $@ $(LIB_OBJ) $(SAN_LD) $(LIBS)

$(B)/lib/libcwrt.so: $(B)/lib/libcwrt.so.$(LIB_VERSION)
	ln -sf libcwrt.so.$(LIB_VERSION) $(B)/lib/$(SONAME)
	ln -sf $(SONAME) $@

# Cases register themselves from constructors, so the suite is one
# relocatable object: linking it pulls in every case.
$(B)/lib/libcwconformance.a: $(CWC_LIB_OBJ)
	@mkdir -p $(dir $@)
	ld -r -o $(B)/obj/cwconformance.o $^
	rm -f $@ && ar rcs $@ $(B)/obj/cwconformance.o

$(B)/bin/cw-conformance: $(CWC_OBJ) $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) -o $@ $(CWC_OBJ) $(B)/lib/libcwrt.a $(SAN_LD) $(CWC_LD) $(CHECK_LIBS) $(JSON_LIBS) $(LIBS)

# A script: the candidate's coverage after a run (gcovr), beside the suite
# it runs.
$(B)/bin/cw-conformance-coverage: conformance/cw-conformance-coverage
	@mkdir -p $(dir $@)
	install -m 755 $< $@

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

# cw-conformance as built when a mutation run left its score: the same
# objects but suiteinfo.o, made from a sample score (conformance/tests/).
$(B)/gen-power/suiteinfo.inc: $(SPEC_MD) $(SPEC_H) ci/suite-info.py conformance/tests/mutation-score.sample.json
	@mkdir -p $(dir $@)
	$(PYTHON) ci/suite-info.py spec conformance/tests/mutation-score.sample.json > $@

$(B)/obj/power/suiteinfo.o: conformance/harness/suiteinfo.c $(B)/gen-power/suiteinfo.inc
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -I$(B)/gen-power -c $< -o $@

$(B)/bin/cw-conformance-power: $(filter-out %/harness/suiteinfo.o,$(CWC_OBJ)) $(B)/obj/power/suiteinfo.o $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) -o $@ $^ $(SAN_LD) $(CWC_LD) $(CHECK_LIBS) $(JSON_LIBS) $(LIBS)

# A backend made to test the reports (conformance/tests/).
$(B)/lib/cwc-odd.so: conformance/tests/odd_backend.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -shared -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(LIBS)

# The reference with one entry replaced, through a derived table.
$(B)/lib/cwrt-wrap.so: examples/wrap.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -shared -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(LIBS)

# The allocation sweep: the reference's allocations routed through
# alloc_fail.c at link time, so any of them can be made to fail.
SWEEP_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign
$(B)/bin/alloc_sweep: reference/tests/alloc_sweep.c reference/tests/alloc_fail.c \
                           reference/tests/sweep_workloads.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -o $@ $(filter %.c,$^) $(B)/lib/libcwrt.a $(SWEEP_WRAP) \
	  -rdynamic $(SAN_LD) $(LIBS)

$(B)/bin/test_%: reference/tests/test_%.c $(B)/lib/libcwrt.a
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -o $@ $< $(B)/lib/libcwrt.a $(SAN_LD) $(CHECK_LIBS) $(LIBS)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# ---- Tests ------------------------------------------------------------------

deps:
	@sh ci/deps.sh

unit: $(UNIT_BIN)
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done

# Every metrics text the suite encodes is kept in $(B)/openmetrics and read
# back by an independent OpenMetrics parser. The suite itself runs the
# storage and network cases of a backend that can have a ring once with
# CW_IO_URING and once with CW_IO_THREADS (NAT-008); the other cases ask
# for CW_IO_AUTO, which CWRT_NATIVE_IO=$(NATIVE_IO) turns into a ring for
# the reference (uring where liburing was found; set NATIVE_IO=threads on
# a kernel without io_uring).
NATIVE_IO ?= $(if $(strip $(URING_LIBS)),uring,threads)
conformance-run: $(B)/bin/cw-conformance
	@mkdir -p $(B)/reports
	@rm -rf $(B)/openmetrics && mkdir -p $(B)/openmetrics
	@for b in $(BACKENDS); do \
	  echo "== conformance on $$b ($(VARIANT))"; \
	  CWRT_NATIVE_IO=$(NATIVE_IO) CWC_METRICS_DIR=$(B)/openmetrics $(B)/bin/cw-conformance --backend $$b \
	    --json $(B)/reports/$$b.json --tap $(B)/reports/$$b.tap --xml $(B)/reports/$$b.xml || exit 1; \
	  $(PYTHON) ci/check-reports.py --expect CONFORMANT $(B)/reports/$$b.json \
	    $(B)/reports/$$b.xml $(B)/reports/$$b.tap || exit 1; \
	done
	@$(PYTHON) ci/openmetrics.py $(B)/openmetrics

# plugin-run, kit-check and negative certify the reference again, loaded
# another way or wrapped: conformance-run has swept every allocation place
# of each workload already, so they sweep a sample of them
# (CWC_ALLOC_PLACES, conformance/cases/alloc_sweep.c).
REPEAT_PLACES := 24

plugin-run: export CWC_ALLOC_PLACES = $(REPEAT_PLACES)
plugin-run: $(B)/bin/cw-conformance $(B)/lib/cwrt-plugin.so $(B)/lib/cwrt-wrap.so
	@mkdir -p $(B)/reports
	@echo "== conformance on a backend loaded from a shared object"
	@CWRT_PLUGIN_BACKEND=deterministic $(B)/bin/cw-conformance \
	  --backend $(B)/lib/cwrt-plugin.so --json $(B)/reports/plugin.json
	@$(PYTHON) ci/check-reports.py --expect CONFORMANT $(B)/reports/plugin.json
	@for b in $(BACKENDS); do \
	  echo "== conformance on $$b wrapped by a derived table"; \
	  CWRT_PLUGIN_BACKEND=$$b $(B)/bin/cw-conformance --backend $(B)/lib/cwrt-wrap.so \
	    --json $(B)/reports/wrap-$$b.json || exit 1; \
	  $(PYTHON) ci/check-reports.py --expect CONFORMANT $(B)/reports/wrap-$$b.json || exit 1; \
	done

# Every wrong backend must be refused: NOT CONFORMANT, a named failing case.
# One certification per core: a third at a time on two cores was no faster.
NEGATIVE_JOBS ?= 2
negative: export CWC_ALLOC_PLACES = $(REPEAT_PLACES)
negative: $(B)/bin/cw-conformance $(B)/lib/cwrt-wrap.so $(MUTANT_SO)
	@echo "== the negative corpus: every wrong backend refused"
	@sh ci/negative.sh $(B)/bin/cw-conformance $(B)/negative $(NEGATIVE_JOBS) \
	  $(B)/lib/cwrt-wrap.so $(MUTANT_SO)

# A sample of the corpus for make check: NEGATIVE_SAMPLE of the wrong
# backends, evenly spaced in name order (so the same ones on every run of
# a tree), and the control on the deterministic backend (make negative
# runs it on both).
NEGATIVE_SAMPLE ?= 8
NEGATIVE_PICK = $(shell echo $(MUTANT_SO) | tr ' ' '\n' | awk -v n=$(NEGATIVE_SAMPLE) \
  -v total=$(words $(MUTANT_SO)) 'NR == 1 { step = total / n } NR - 1 >= pick { print; pick += step }')
negative-sample: export CWC_ALLOC_PLACES = $(REPEAT_PLACES)
negative-sample: export NEGATIVE_CONTROLS = deterministic
negative-sample: $(B)/bin/cw-conformance $(B)/lib/cwrt-wrap.so $(NEGATIVE_PICK)
	@echo "== the negative corpus, $(words $(NEGATIVE_PICK)) of $(words $(MUTANT_SO)) wrong backends: every one refused"
	@sh ci/negative.sh $(B)/bin/cw-conformance $(B)/negative-sample $(NEGATIVE_JOBS) \
	  $(B)/lib/cwrt-wrap.so $(NEGATIVE_PICK)

# The harness itself: verdicts, exit statuses, and every report format read
# back by independent readers; compare on real and derived reports; --jobs
# against one case at a time (reusing the reports conformance-run and
# skeleton-run left), and --expect.
report-check: $(B)/bin/cw-conformance $(B)/bin/cw-conformance-power $(B)/lib/cwc-odd.so \
  $(B)/lib/libskeleton.so $(B)/mutants/det_counter_32bit.so
	@sh conformance/tests/reports.sh $(B) $(PYTHON)
	@sh conformance/tests/html.sh $(B) $(PYTHON)
	@$(PYTHON) conformance/tests/compare.py $(B)
	@CWRT_NATIVE_IO=$(NATIVE_IO) sh conformance/tests/jobs.sh $(B) $(PYTHON)
	@sh conformance/tests/expect.sh $(B) $(PYTHON)

# The HTML report as a browser sees it: Debian's chromium, headless, must
# show a candidate's markup as text and run none of it.
html-browser: $(B)/bin/cw-conformance $(B)/lib/cwc-odd.so
	@sh conformance/tests/html.sh $(B) $(PYTHON) browser

requirements: $(B)/bin/cw-conformance
	@$(B)/bin/cw-conformance --requirements > $(B)/requirements.txt || \
	  { cat $(B)/requirements.txt; echo "spec requirements without a conformance case"; exit 1; }
	@echo "== every requirement of spec/ has a case ($$(wc -l < $(B)/requirements.txt) requirements)"

# The allocation sweep under ASan looks for memory errors on the failure
# paths; the release sweep before it has run every failure point (up to
# 400 a workload), so the ASan one, ten times slower a run, takes an even
# sample of them.
ASAN_SWEEP_POINTS := 60

# Two tiers. `make check` is the loop before every commit, within five
# minutes on two cores: the reference's two backends and the skeleton
# certified, the unit tests, the reports read back, the installed kit, a
# sample of the negative corpus, the fuzz corpus replayed, the build's
# configuration. `make check-all` (what .ci/run runs) is everything: the
# whole negative corpus, the sanitizers and valgrind, the allocation sweeps,
# a fresh clone following the README, the other architectures. Each prints
# the time of each of its stages at the end (ci/stages.sh).
CHECK_STAGES := "-j2 all" layers exports-check spdx unit requirements conformance-run skeleton-run report-check \
  kit-check negative-sample mutation-selftest sweep-check trace-check config-check fuzz-replay \
  rust-run

check: deps
	@rm -f build/*/reports/*.json
	@sh ci/stages.sh check $(CHECK_STAGES)
	@sh ci/summary.sh $$(sed -n 's/^fuzz replay: \([0-9]*\) passed.*/\1/p' build/fuzz-replay.txt)

# The ASan unit tests, sweep and skeleton suite, and the two suites under
# valgrind, run two targets at once (-O keeps each one's output together):
# each keeps about one core busy. The native suites run alone: their cases
# time threads and sockets, which a core taken by another run would slow
# without testing anything more.
check-all: deps
	@rm -f build/*/reports/*.json
	@sh ci/stages.sh check-all $(CHECK_STAGES) plugin-run negative skeleton-kit-check \
	  oss-fuzz-check html-browser skeleton-coverage alloc-sweep "VARIANT=asan conformance-run" \
	  "-j2 -O VARIANT=asan CW_SWEEP_POINTS=$(ASAN_SWEEP_POINTS) unit skeleton-run alloc-sweep" \
	  "VARIANT=tsan CC=clang conformance-run skeleton-run" \
	  "-j2 -O valgrind skeleton-valgrind" fuzz-candidates fresh-check cross-check
	@sh ci/summary.sh $$(sed -n 's/^fuzz replay: \([0-9]*\) passed.*/\1/p' build/fuzz-replay.txt)

fuzz-replay:
	@$(MAKE) -s -C fuzz replay > build/fuzz-replay.txt || { cat build/fuzz-replay.txt; exit 1; }
	@cat build/fuzz-replay.txt

fuzz-candidates:
	@$(MAKE) -s -C fuzz candidates

spdx:
	@sh ci/spdx.sh

# No false refusals: correct backends certified again and again on an
# oversubscribed machine, under valgrind and under TSan (ci/flake-check.sh;
# FLAKE_N certifications each, 10 by default). Long: not in check-all.
flake-check:
	@sh ci/deps.sh flake
	@sh ci/flake-check.sh $(B)

# A build follows the machine: liburing hidden, then visible, in a scratch
# copy of the tree (ci/config-test.sh).
config-check:
	@sh ci/config-test.sh $(abspath build/config-test)

# The README's promise: a fresh clone, its commands in its order
# (ci/fresh.sh).
fresh-check:
	@sh ci/fresh.sh $(abspath build/fresh)

# Other architectures, through Debian's cross compilers and qemu-user
# (ci/cross-check.sh; what cannot run under emulation: ci/README.md).
cross-check:
	@sh ci/deps.sh cross
	@sh ci/cross-check.sh

# The suite on the deterministic backend under valgrind: each case's child
# process exits non-zero on any memory error or definite leak.
VALGRIND := valgrind -q --error-exitcode=9 --leak-check=full --show-leak-kinds=definite \
            --errors-for-leak-kinds=definite --suppressions=conformance/valgrind.supp

valgrind: all
	@echo "== conformance on deterministic under valgrind"
	@$(VALGRIND) $(B)/bin/cw-conformance --backend deterministic

# One-operator mutants of reference/, each built in a scratch tree under
# build/mutation and certified on both backends; see ci/mutation/README.md.
N ?= 400
SEED ?= 1
# Twice the cores: a mutant that hangs waits out its time limit without using a core.
JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))
TIMEOUT ?= 120
mutation: deps
	$(PYTHON) ci/mutation/run.py --n $(N) --seed $(SEED) --jobs $(JOBS) --timeout $(TIMEOUT) \
	  $(if $(RERUN),--rerun) $(if $(RESCORE),--rescore) $(if $(FILTER),--filter $(FILTER)) \
	  $(if $(SINCE),--since $(SINCE)) $(if $(CATEGORY),--category $(CATEGORY)) \
	  $(if $(ASAN),--asan) $(if $(TSAN),--tsan) \
	  $(if $(VALGRIND_RUN),--valgrind)

mutation-selftest:
	@$(PYTHON) ci/mutation/selftest.py

# Every allocation of the sweep's workloads made to fail in turn
# (reference/tests/alloc_sweep.c): make check samples at most 400 points a
# workload; alloc-sweep-full runs every one, in release and under ASan.
ALLOC_SITES = grep -rhoE '\b(malloc|calloc|realloc|posix_memalign|cw_strdup|cw_grow)\(' \
	  --include='*.c' --include='*.h' reference --exclude-dir=tests | wc -l
alloc-sweep: $(B)/bin/alloc_sweep
	@echo "== allocation sweep ($(VARIANT)): every allocation of each workload made to fail"
	@echo "sweep: $$($(ALLOC_SITES)) allocation calls in reference/ (malloc, calloc, realloc, posix_memalign, cw_strdup, cw_grow)"
	@$(B)/bin/alloc_sweep

alloc-sweep-full:
	$(MAKE) CW_SWEEP=full alloc-sweep
	$(MAKE) VARIANT=asan CW_SWEEP=full alloc-sweep

# Packages first, then a make that reads the configuration they give: a
# make that parsed before the install would build without them.
certify: deps
	@$(MAKE) --no-print-directory certify-run

certify-run: all
	@mkdir -p $(B)/reports
	@for b in $(BACKENDS); do \
	  $(B)/bin/cw-conformance --backend $$b --certificate --json $(B)/reports/$$b.json \
	    --xml $(B)/reports/$$b.xml || exit 1; \
	done
	@echo "reports: $(B)/reports/"

fuzz:
	$(MAKE) -C fuzz all

# fuzz/oss-fuzz/build.sh called as OSS-Fuzz and ClusterFuzzLite call it
# (their variables set, an $OUT folder), then each binary over its seed
# corpus; the image itself needs a registry this machine cannot reach.
OSSF := $(abspath build/oss-fuzz)
oss-fuzz-check:
	@rm -rf $(OSSF) && mkdir -p $(OSSF)/src $(OSSF)/out $(OSSF)/work
	@ln -s $(CURDIR) $(OSSF)/src/cwrt
	@flags="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address,undefined \
	  -fsanitize=fuzzer-no-link"; \
	CC=clang CXX=clang++ CFLAGS="$$flags" CXXFLAGS="$$flags" SANITIZER=address \
	  LIB_FUZZING_ENGINE=-fsanitize=fuzzer SRC=$(OSSF)/src OUT=$(OSSF)/out WORK=$(OSSF)/work \
	  bash fuzz/oss-fuzz/build.sh > $(OSSF)/build.log 2>&1 || { tail -30 $(OSSF)/build.log; exit 1; }
	@sh fuzz/oss-fuzz/check-out.sh $(OSSF)/out
	@if SANITIZER=memory OUT=$(OSSF)/out SRC=$(OSSF)/src bash fuzz/oss-fuzz/build.sh 2>/dev/null; \
	  then echo "build.sh accepted MemorySanitizer"; exit 1; fi
	@if SANITIZER=memory OUT=$(OSSF)/out SRC=$(OSSF)/src bash .clusterfuzzlite/build.sh 2>/dev/null; \
	  then echo ".clusterfuzzlite/build.sh does not run fuzz/oss-fuzz/build.sh"; exit 1; fi

CI_SECONDS ?= 60
fuzz-ci:
	$(MAKE) -C fuzz ci CI_SECONDS=$(CI_SECONDS)

coverage: deps
	$(MAKE) VARIANT=coverage all unit conformance-run
	$(MAKE) -C fuzz replay VARIANT=coverage
	sh coverage/report.sh build/coverage

bench:
	@sh ci/deps.sh bench
	$(MAKE) all
	$(MAKE) -C bench run

# Which folder of reference/ may use which: includes and linked symbols.
# Only the public surface exported from libcwrt.so (ci/exports.sh).
exports-check: libs
	@sh ci/exports.sh $(B)/lib

layers: libs
	@sh ci/layers.sh $(B)/obj

lint: layers format-check
	sh ci/lint.sh

# Every C file but the spec's headers, whose text its digest pins: they
# change only with the spec's version (ci/suite-info.py).
FORMATTED = git ls-files '*.c' '*.h' ':!:spec/'
format:
	clang-format -i $$($(FORMATTED))

format-check:
	@sh ci/deps.sh lint
	@clang-format --dry-run -Werror $$($(FORMATTED))
	@echo "format: every file as clang-format has it"

# A kit a third party can use from the installed tree alone: the headers,
# libcwrt.so with its SONAME (cwrt.pc sets an rpath, so a plugin built with
# pkg-config loads without LD_LIBRARY_PATH), the suite as a library
# (cwconformance.pc, cwconformance.h), cw-conformance and its man page, and
# the report schema and checkers in share/cwrt.
install: all
	install -d $(DESTDIR)$(PREFIX)/include/cw $(DESTDIR)$(PREFIX)/include/cwrt \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/share/cwrt $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 spec/include/cw/*.h $(DESTDIR)$(PREFIX)/include/cw/
	install -m 644 LICENSE LICENSE-APACHE LICENSE-MIT $(DESTDIR)$(PREFIX)/include/cw/
	install -d $(DESTDIR)$(PREFIX)/share/doc/cwrt
	install -m 644 LICENSE LICENSE-APACHE LICENSE-MIT $(DESTDIR)$(PREFIX)/share/doc/cwrt/
	install -m 644 reference/include/cwrt/*.h $(DESTDIR)$(PREFIX)/include/cwrt/
	install -m 644 conformance/include/cwconformance.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(B)/lib/libcwrt.a $(B)/lib/libcwconformance.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/lib/libcwrt.so.$(LIB_VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libcwrt.so.$(LIB_VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libcwrt.so
	install -m 755 $(B)/bin/cw-conformance $(B)/bin/cw-sweep $(B)/bin/cw-conformance-coverage \
	  $(DESTDIR)$(PREFIX)/bin/
	install -m 644 conformance/cw-conformance.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 755 ci/openmetrics.py ci/check-reports.py $(DESTDIR)$(PREFIX)/share/cwrt/
	install -m 644 conformance/report.schema.json conformance/compare.schema.json \
	  conformance/valgrind.supp $(DESTDIR)$(PREFIX)/share/cwrt/
	for pc in cwrt cwconformance; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(LIB_VERSION)|g' \
	    -e 's|@SUITE_VERSION@|$(SUITE_VERSION)|g' -e 's|@URING_LIBS@|$(strip $(URING_LIBS))|g' ci/$$pc.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc || exit 1; \
	done

# The kit as a third party meets it: installed into a directory, a plugin
# and a test binary of one's own built with pkg-config alone, both certified
# with no LD_LIBRARY_PATH.
KIT := $(abspath $(B))/kit
kit-check: export CWC_ALLOC_PLACES = $(REPEAT_PLACES)
kit-check: all
	@rm -rf $(KIT) && $(MAKE) -s install PREFIX=$(KIT) > /dev/null
	@sh ci/kit-check.sh $(KIT) $(PYTHON)

clean:
	rm -rf build
	$(MAKE) -C fuzz clean

# The skeleton backend (examples/skeleton/): a core backend from spec/ alone.
include examples/skeleton/skeleton.mk
include tools/sweep/sweep.mk
include tools/trace/trace.mk
include examples/rust/rust.mk
