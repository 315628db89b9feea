/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_iobuf_try_into_mut succeeds on a buffer that other references share,
 * or whose bytes are static or adopted, by copying its bytes into a new
 * mutable buffer (BUF-011: it must refuse and leave the buffer as it was). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static bool copying_into_mut(cw_iobuf *buf, cw_iobuf_mut *out)
{
    if (cwm_base_buffers->iobuf_try_into_mut(buf, out))
        return true;
    if (!buf->hdr.backend || buf->len == 0)
        return false;
    cw_iobuf_mut m;
    if (cwm_base_buffers->mut_alloc(buf->hdr.backend, buf->len, 1, false, &m) != CW_OK)
        return false;
    memcpy(m.data, buf->data, buf->len);
    m.len = buf->len;
    cwm_base_buffers->iobuf_release(buf);
    *out = m;
    return true;
}

static void mutate(void)
{
    cwm_buffers.iobuf_try_into_mut = copying_into_mut;
}
