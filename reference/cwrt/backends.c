/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * backends.c - finding the reference's backends by name.
 */
#include <string.h>

#include "cwrt/cwrt.h"

const cw_backend *cw_backend_by_name(const char *name)
{
    if (name && strcmp(name, "deterministic") == 0)
        return cw_backend_deterministic();
    if (name && strcmp(name, "native") == 0)
        return cw_backend_native();
    return NULL;
}
