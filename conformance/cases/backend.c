/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * backend.c - the backend table itself (spec/10-backend.md).
 */
#include <string.h>

#include "cases/util.h"

static void *objects_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_ptr_eq(cw__backend_of(ctx), cwc_backend);
    cw_ctx *child = cw_child(ctx, "c");
    ck_assert_ptr_eq(cw__backend_of(child), cwc_backend);
    cw_handle *h = cw_handle_ready(ctx, CW_OK, NULL);
    ck_assert_ptr_eq(cw__backend_of(h), cwc_backend);
    cw_chan *c = cw_chan_new(ctx, 1, 1);
    ck_assert_ptr_eq(cw__backend_of(c), cwc_backend);
    cw_oneshot *o = cw_oneshot_new(ctx, 1);
    ck_assert_ptr_eq(cw__backend_of(o), cwc_backend);
    cw_signal *s = cw_stopped(ctx);
    ck_assert_ptr_eq(cw__backend_of(s), cwc_backend);
    cw_waker *w = cw_waker_current(ctx);
    ck_assert_ptr_eq(cw__backend_of(w), cwc_backend);
    cw_wait wait = cw_wait_pending(ctx);
    ck_assert_ptr_eq(wait.backend, cwc_backend);
    cw_waker_release(w);
    cw_signal_release(s);
    cw_oneshot_sender_drop(o);
    cw_oneshot_receiver_drop(o);
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
    cw_handle_release(h);
    cw_ctx_release(child);
    return NULL;
}

CWC_CASE(backend_table_and_objects, "backend", "ABI-001 ABI-002 ABI-003 RUN-008", CWC_REPEATED)
{
    ck_assert_uint_eq(CW_ABI_MAJOR(cwc_backend->abi_version), CW_ABI_MAJOR(CW_ABI_VERSION));
    ck_assert_uint_ge(cwc_backend->size, offsetof(cw_backend, audit_digest));
    ck_assert_ptr_nonnull(cwc_backend->name);
    ck_assert_uint_eq(cwc_backend->capabilities &
                          ~(uint64_t)(CW_CAP_DETERMINISTIC | CW_CAP_AUDIT | CW_CAP_PARALLEL |
                                      CW_CAP_PERSISTENT_STORAGE | CW_CAP_RECOVER),
                      0);
    cwc_run_ok(NULL, objects_root, NULL);
}

/* A declaration is whole: what a profile needs is declared with it, and a
 * capability comes with its entries (and they only with it). */
CWC_CASE(backend_declares_whole_profiles, "backend", "ABI-004 RUN-008", CWC_REPEATED)
{
    const cw_backend *b = cwc_backend;
    int recover = (b->capabilities & CW_CAP_RECOVER) != 0;
    ck_assert_int_eq(CW_BACKEND_HAS(b, start_checkpoint), recover);
    ck_assert_int_eq(CW_BACKEND_HAS(b, recover), recover);
    ck_assert_int_eq(CW_BACKEND_HAS(b, checkpoint_free), recover);
    if (recover)
        ck_assert_msg(b->capabilities & CW_CAP_DETERMINISTIC, "recover needs deterministic");
    if (b->capabilities & CW_CAP_DETERMINISTIC)
        ck_assert_msg(b->capabilities & CW_CAP_AUDIT, "deterministic needs audit");
    if (CW_BACKEND_HAS(b, storage) || CW_BACKEND_HAS(b, network))
        ck_assert_msg(CW_BACKEND_HAS(b, buffers), "storage and network need buffers");
    if (b->capabilities & CW_CAP_PERSISTENT_STORAGE)
        ck_assert_msg(CW_BACKEND_HAS(b, storage), "persistent-storage needs storage");
}

static void *audit_root(cw_ctx *ctx, void *arg)
{
    char digest[65];
    int rc = cw_audit_digest(ctx, digest);
    if (*(int *)arg) {
        ck_assert_int_eq(rc, CW_OK);
        ck_assert_uint_eq(strlen(digest), 64);
    } else {
        ck_assert_int_eq(rc, CW_ERR_UNSUPPORTED);
    }
    return NULL;
}

CWC_CASE(audit_matches_capability, "backend", "ABI-003 RUN-008", CWC_REPEATED)
{
    int has = (cwc_backend->capabilities & CW_CAP_AUDIT) != 0;
    cwc_run_ok(NULL, audit_root, &has);
    /* With the run's audit switched off there is no digest at all. */
    cw_config cfg = cwc_config();
    cfg.audit = false;
    int none = 0;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, audit_root, &none, &res), CW_OK);
    ck_assert_str_eq(res.digest, "");
}

CWC_CASE(error_strings, "errors", "ERR-001 RUN-008", CWC_REPEATED)
{
    ck_assert_str_eq(cw_strerror(CW_OK), "ok");
    ck_assert_str_eq(cw_strerror(CW_ERR_EXITED), "exited");
    ck_assert_str_eq(cw_strerror(CW_ERR_CLOSED), "closed");
    ck_assert_str_eq(cw_strerror(CW_ERR_ABORTED), "aborted");
    ck_assert_str_eq(cw_strerror(CW_ERR_TIMEOUT), "timeout");
    ck_assert_str_eq(cw_strerror(CW_ERR_BIND_FAILED), "bind failed");
    ck_assert_str_eq(cw_strerror(CW_ERR_RECV_FAILED), "recv failed");
    ck_assert_str_eq(cw_strerror(12345), "unknown error");
    /* Every code has its own text and is negative. */
    for (int a = -70; a < 0; a++)
        for (int b = a + 1; b < 0; b++)
            if (strcmp(cw_strerror(a), "unknown error") != 0)
                ck_assert_str_ne(cw_strerror(a), cw_strerror(b));
}
