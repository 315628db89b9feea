# SPDX-License-Identifier: Apache-2.0 OR MIT
# examples/skeleton/skeleton.mk - the skeleton backend, included by the top
# Makefile.
#
#   make skeleton             $(B)/lib/libskeleton.so, from spec/include only
#   make skeleton-run         certify it with this tree's cw-conformance
#   make skeleton-valgrind    the same under valgrind: no memory error, no leak
#   make skeleton-kit-check   build it against an installed kit with pkg-config
#                             alone and certify it with the installed suite
#   make skeleton-coverage    which lines of it the suite reaches, through
#                             cw-conformance-coverage (gcovr HTML and Cobertura
#                             in build/skeleton-coverage/report/), checked
#
# The skeleton sees nothing of reference/: its only include path is the
# spec's headers, and it exports nothing but cw_backend_entry.

SK_SRC := $(sort $(wildcard examples/skeleton/*.c))
SK_HDR := $(wildcard examples/skeleton/*.h)
SK_CFLAGS := -std=c11 -D_GNU_SOURCE -g -fPIC -fvisibility=hidden $(WARN)
SK_LIBS := -lpthread

.PHONY: skeleton skeleton-run skeleton-valgrind skeleton-kit-check skeleton-coverage

skeleton: $(B)/lib/libskeleton.so

$(B)/lib/libskeleton.so: $(SK_SRC) $(SK_HDR) $(wildcard spec/include/cw/*.h) $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(SK_CFLAGS) $(OPT) $(CFLAGS) -Ispec/include -shared -o $@ \
	  $(SK_SRC) $(SAN_LD) $(SK_LIBS)

# Every declared profile (core, and the libraries over it) must certify.
skeleton-run: $(B)/bin/cw-conformance $(B)/lib/libskeleton.so
	@mkdir -p $(B)/reports
	@echo "== conformance on the skeleton backend ($(VARIANT))"
	@$(B)/bin/cw-conformance --backend $(B)/lib/libskeleton.so --certificate \
	  --json $(B)/reports/skeleton.json > $(B)/reports/skeleton.txt 2>&1 || \
	  { cat $(B)/reports/skeleton.txt; exit 1; }
	@sed -n '/====/,/====/p' $(B)/reports/skeleton.txt

# Each case's process exits non-zero on a memory error or a definite leak.
skeleton-valgrind: $(B)/bin/cw-conformance $(B)/lib/libskeleton.so
	@echo "== conformance on the skeleton backend under valgrind"
	@$(VALGRIND) $(B)/bin/cw-conformance --backend $(B)/lib/libskeleton.so -q \
	  > $(B)/skeleton-valgrind.txt 2>&1 || { cat $(B)/skeleton-valgrind.txt; exit 1; }
	@grep '^verdict:' $(B)/skeleton-valgrind.txt

SK_KIT := $(abspath $(B))/skeleton-kit
skeleton-kit-check: all
	@rm -rf $(SK_KIT) && $(MAKE) -s install PREFIX=$(SK_KIT) > /dev/null
	@sh examples/skeleton/kit-check.sh $(SK_KIT) $(PYTHON)

# One object per source, so that gcov's files name the skeleton's own
# sources; the suite itself is the release build, without coverage.
SK_COV := build/skeleton-coverage
SK_COV_OBJ := $(SK_SRC:examples/skeleton/%.c=$(SK_COV)/obj/%.o)

$(SK_COV)/obj/%.o: examples/skeleton/%.c $(SK_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC $@"; $(CC) $(SK_CFLAGS) -O0 --coverage -fprofile-update=atomic -DSK_COVERAGE \
	  -Ispec/include -c $< -o $@

$(SK_COV)/libskeleton.so: $(SK_COV_OBJ)
	@echo "  CC $@"; $(CC) -shared -o $@ $^ --coverage $(SK_LIBS)

skeleton-coverage: all $(SK_COV)/libskeleton.so $(B)/lib/libskeleton.so
	@sh ci/deps.sh coverage
	@sh examples/skeleton/coverage-check.sh $(B) $(SK_COV) $(PYTHON)
