/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_audit_digest spells the digest in uppercase hex instead of lowercase
 * (11-deterministic.md, the audit digest). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <ctype.h>

static int shouting_digest(cw_ctx *ctx, char out[65])
{
    int rc = cwm_base->audit_digest(ctx, out);
    for (size_t i = 0; rc == CW_OK && out[i]; i++)
        out[i] = (char)toupper((unsigned char)out[i]);
    return rc;
}

static void mutate(void)
{
    cwm.audit_digest = shouting_digest;
}
