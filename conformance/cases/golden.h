/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * golden.h - what the cases with golden digests share: comparing a digest
 * with the value spec/ fixes (and logging it, so that runs on other
 * machines can be compared line by line), and the audit chain of
 * spec/11-deterministic.md computed independently of any backend, so a
 * case can state the exact events a workload must record.
 */
#ifndef CWC_CASES_GOLDEN_H
#define CWC_CASES_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

/* Require `hex` (64 lowercase hex digits) to equal `golden`. When the
 * environment names a file in CWC_GOLDEN_LOG, the line "<name> <hex>" is
 * appended to it first, whatever the outcome. */
void cwc_golden(const char *name, const char *hex, const char *golden);

/* Hex of a 32-byte digest into out[65]. */
void cwc_hex32(const uint8_t digest[32], char out[65]);

/* An audit chain (11-deterministic.md, "Audit digest"), starting at 32 zero
 * bytes. An event is begun, given its fields one by one, and ended. */
typedef struct cwc_chain {
    uint8_t digest[32];
    void *md; /* the SHA-256 of the event being built */
} cwc_chain;

void cwc_chain_init(cwc_chain *c);
void cwc_chain_begin(cwc_chain *c, const char *label);
void cwc_chain_field(cwc_chain *c, const void *data, size_t len);
void cwc_chain_str(cwc_chain *c, const char *s);
/* A field of `n` bytes (1 to 16): `v` big-endian, sign-extended past 8. */
void cwc_chain_be(cwc_chain *c, int64_t v, size_t n);
void cwc_chain_end(cwc_chain *c);
/* The `process_task` event of task `id` with `label`. */
void cwc_chain_task(cwc_chain *c, uint64_t id, const char *label);
void cwc_chain_hex(const cwc_chain *c, char out[65]);

#endif
