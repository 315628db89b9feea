/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A pooled buffer released through a slice or a clone never goes back to
 * its class: only the handle that came from the pool returns it
 * (BUF-021: whatever held it last). The mutant keeps one extra reference
 * on every pooled buffer a slice or clone is made of, for good. */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void pinning_clone(const cw_iobuf *buf, cw_iobuf *out)
{
    cwm_base_buffers->iobuf_clone(buf, out);
    if (cwm_base_buffers->iobuf_is_pooled(buf)) {
        cw_iobuf pin;
        cwm_base_buffers->iobuf_clone(buf, &pin); /* never released */
    }
}

static void mutate(void)
{
    cwm_buffers.iobuf_clone = pinning_clone;
}
