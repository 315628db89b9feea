/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_with_attribute copies the value into a block one byte too short (its
 * length without the terminator) before handing it on: the terminator is
 * written past the block's end, a heap overrun that glibc's slack hides
 * from every value the program reads back (ABI-005). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <stdlib.h>
#include <string.h>

static void short_copy_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    char *copy = malloc(strlen(value)); /* no room for the terminator */
    if (!copy) {
        cwm_base->with_attribute(ctx, key, value);
        return;
    }
    for (size_t i = 0;; i++) { /* copied up to and with the terminator */
        copy[i] = value[i];
        if (!value[i])
            break;
    }
    cwm_base->with_attribute(ctx, key, copy);
    free(copy);
}

static void mutate(void)
{
    cwm.with_attribute = short_copy_attribute;
}
