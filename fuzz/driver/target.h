/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * target.h - the one function every fuzz target defines.
 *
 * The same target source links against libFuzzer, against an AFL++ driver
 * and against the plain replay driver; each of those calls this once per
 * input. A target reports a problem by aborting the process.
 */
#ifndef FUZZ_TARGET_H
#define FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: what a target does once per process, before any input
 * (libFuzzer calls it; so do the AFL++ and replay drivers). */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#endif
