/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * plugin.c - the smallest backend shared object: it exports the symbol the
 * conformance suite looks for and hands out one of the reference's
 * backends. A third-party implementation exports its own table the same way.
 *
 *   cc -shared -fPIC -o plugin.so plugin.c -lcwrt
 *   cw-conformance --backend ./plugin.so
 *
 * CWRT_PLUGIN_BACKEND picks which reference backend ("native" by default).
 */
#include <stdlib.h>

#include "cwrt/cwrt.h"

const cw_backend *cw_backend_entry(void);

const cw_backend *cw_backend_entry(void)
{
    const char *name = getenv("CWRT_PLUGIN_BACKEND");
    const cw_backend *b = cw_backend_by_name(name ? name : "native");
    return b ? b : cw_backend_native();
}
