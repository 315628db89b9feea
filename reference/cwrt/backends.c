/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * backends.c - the reference's backends by name, from the one list of them
 * (cwrt/registry.h).
 */
#include <string.h>

#include "cwrt/cwrt.h"
#include "cwrt/registry.h"

const cw_origin *const cw_reference_origins[] = {
#define ORIGIN(name) &cw_##name##_origin,
    CW_REFERENCE_BACKENDS(ORIGIN)
#undef ORIGIN
        NULL,
};

static const char *const names[] = {
#define NAME(name) #name,
    CW_REFERENCE_BACKENDS(NAME)
#undef NAME
};

const cw_backend *cw_backend_by_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return cw_reference_origins[i]->table;
    return NULL;
}
