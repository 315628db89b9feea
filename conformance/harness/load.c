/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * load.c - loading and identifying the backend under test.
 *
 * The certificate names the exact bytes certified, so the shared object is
 * hashed from the file dlopen is given (a path, never a library search).
 */
#include <dlfcn.h>
#include <openssl/evp.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/load.h"

#ifdef CWC_WITH_REFERENCE
#include "cwrt/cwrt.h"
#endif

int cwc_is_shared_object(const char *spec)
{
    const char *so = strstr(spec, ".so");
    while (so && so[3] != '\0' && so[3] != '.')
        so = strstr(so + 1, ".so");
    return strchr(spec, '/') != NULL || so != NULL;
}

static int sha256_file(const char *path, char out[65])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    unsigned char buf[65536], sum[32];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0)
        ok = EVP_DigestUpdate(md, buf, n);
    ok = ok && !ferror(f) && EVP_DigestFinal_ex(md, sum, NULL);
    EVP_MD_CTX_free(md);
    fclose(f);
    for (int i = 0; ok && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", sum[i]);
    return ok ? 0 : -1;
}

static int load_shared(const char *spec, cwc_loaded *out, char *why, size_t whylen)
{
    /* "x.so" is the file in this directory, not a library to search for;
     * the certificate names it by its absolute path. */
    char given[4096];
    snprintf(given, sizeof given, "%s%s", strchr(spec, '/') ? "" : "./", spec);
    if (!realpath(given, out->path) || sha256_file(out->path, out->sha256) != 0) {
        snprintf(why, whylen, "cannot read %s", given);
        return -1;
    }
    void *so = dlopen(out->path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        snprintf(why, whylen, "cannot load %s: %s", out->path, dlerror());
        return -1;
    }
    cw_backend_entry_fn entry;
    *(void **)&entry = dlsym(so, CW_BACKEND_ENTRY_SYMBOL);
    out->backend = entry ? entry() : NULL;
    if (!out->backend) {
        snprintf(why, whylen, "%s: %s", out->path,
                 entry ? "cw_backend_entry returned NULL" : "exports no " CW_BACKEND_ENTRY_SYMBOL);
        return -1;
    }
    return 0;
}

int cwc_load_backend(const char *spec, cwc_loaded *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    if (cwc_is_shared_object(spec))
        return load_shared(spec, out, why, whylen);
#ifdef CWC_WITH_REFERENCE
    out->backend = cw_backend_by_name(spec);
    /* The lookup must give the backend of that name, and nothing for a name
     * that is none: a registry that gave another would have the
     * certificate name one backend and certify another. */
    if (out->backend && strcmp(out->backend->name, spec) == 0 && !cw_backend_by_name("") &&
        !cw_backend_by_name(NULL))
        return 0;
    if (out->backend) {
        snprintf(why, whylen,
                 "the reference's lookup of backends is broken: '%s' gave the backend '%s', "
                 "and a name that is none must give nothing",
                 spec, out->backend->name);
        out->backend = NULL;
        return -1;
    }
#endif
    snprintf(why, whylen,
             "unknown backend '%s' (a reference backend's name, or a path to a "
             "shared object)",
             spec);
    return -1;
}

/* The core entries every backend fills (spec/10-backend.md, profile core),
 * by name and place: a NULL one is refused at load, with its name, rather
 * than found as a crash of every case that calls it. */
#define CORE_ENTRY(field)                                                                          \
    {                                                                                              \
#field, offsetof(cw_backend, field)                                                        \
    }
static const struct core_entry {
    const char *name;
    size_t offset;
} core_entries[] = {
    CORE_ENTRY(start),
    CORE_ENTRY(child),
    CORE_ENTRY(with_attribute),
    CORE_ENTRY(label),
    CORE_ENTRY(set_execution),
    CORE_ENTRY(ctx_release),
    CORE_ENTRY(spawn),
    CORE_ENTRY(handle_ready),
    CORE_ENTRY(abort),
    CORE_ENTRY(handle_release),
    CORE_ENTRY(yield),
    CORE_ENTRY(waker_current),
    CORE_ENTRY(waker_wake),
    CORE_ENTRY(waker_release),
    CORE_ENTRY(park),
    CORE_ENTRY(cleanup_push),
    CORE_ENTRY(cleanup_pop),
    CORE_ENTRY(current),
    CORE_ENTRY(select),
    CORE_ENTRY(wait_join),
    CORE_ENTRY(wait_sleep_until),
    CORE_ENTRY(wait_ready),
    CORE_ENTRY(wait_pending),
    CORE_ENTRY(chan_new),
    CORE_ENTRY(chan_sender_add),
    CORE_ENTRY(chan_sender_drop),
    CORE_ENTRY(chan_receiver_drop),
    CORE_ENTRY(wait_send),
    CORE_ENTRY(wait_recv),
    CORE_ENTRY(oneshot_new),
    CORE_ENTRY(oneshot_send),
    CORE_ENTRY(oneshot_sender_drop),
    CORE_ENTRY(oneshot_receiver_drop),
    CORE_ENTRY(wait_oneshot),
    CORE_ENTRY(stopped),
    CORE_ENTRY(signal_release),
    CORE_ENTRY(wait_signal),
    CORE_ENTRY(wait_stop),
    CORE_ENTRY(random),
};

static int core_entries_filled(const cw_backend *b, char *why, size_t whylen)
{
    for (size_t i = 0; i < sizeof core_entries / sizeof core_entries[0]; i++) {
        void *entry;
        memcpy(&entry, (const char *)b + core_entries[i].offset, sizeof entry);
        if (!entry) {
            snprintf(why, whylen, "backend '%s' leaves the core entry '%s' NULL", b->name,
                     core_entries[i].name);
            return -1;
        }
    }
    if (!b->vpanic && !CW_BACKEND_HAS(b, panic)) {
        snprintf(why, whylen, "backend '%s' fills neither 'panic' nor 'vpanic' (PAN-007)", b->name);
        return -1;
    }
    if ((b->capabilities & CW_CAP_AUDIT) && !b->audit_digest) {
        snprintf(why, whylen, "backend '%s' declares CW_CAP_AUDIT with 'audit_digest' NULL",
                 b->name);
        return -1;
    }
    return 0;
}

int cwc_check_abi(const cw_backend *b, char *why, size_t whylen)
{
    if (CW_ABI_MAJOR(b->abi_version) != CW_ABI_MAJOR(CW_ABI_VERSION)) {
        snprintf(why, whylen, "backend ABI %u.%u, suite ABI %u.%u", CW_ABI_MAJOR(b->abi_version),
                 b->abi_version & 0xffff, CW_ABI_MAJOR(CW_ABI_VERSION), CW_ABI_VERSION & 0xffff);
        return -1;
    }
    if (b->size < offsetof(cw_backend, buffers) || !b->name) {
        snprintf(why, whylen, "backend table of %u bytes lacks required entries", b->size);
        return -1;
    }
    return core_entries_filled(b, why, whylen);
}
