/*
 * main.c - cw-conformance: run the suite against one backend and report.
 *
 *   cw-conformance --backend deterministic|PATH.so [--filter SUBSTR]
 *                  [--seed N] [--list] [--requirements]
 *                  [--json FILE] [--tap FILE] [--xml FILE] [--certificate]
 *
 * A backend is one of the reference's, by name, or a shared object that
 * exports cw_backend_entry. Exit status: 0 when every selected case passed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cwc.h"
#include "harness/report.h"

#ifdef CWC_WITH_REFERENCE
#include "cwrt/cwrt.h"
#endif

static const cw_backend *load_backend(const char *spec, char *why, size_t whylen)
{
#ifdef CWC_WITH_REFERENCE
    const cw_backend *b = cw_backend_by_name(spec);
    if (b)
        return b;
#endif
    if (!strchr(spec, '/')) {
        snprintf(why, whylen, "unknown backend '%s' (a name, or a path to a shared object)", spec);
        return NULL;
    }
    void *so = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        snprintf(why, whylen, "cannot load %s: %s", spec, dlerror());
        return NULL;
    }
    cw_backend_entry_fn entry;
    *(void **)&entry = dlsym(so, CW_BACKEND_ENTRY_SYMBOL);
    if (!entry) {
        snprintf(why, whylen, "%s exports no %s", spec, CW_BACKEND_ENTRY_SYMBOL);
        return NULL;
    }
    return entry();
}

static int check_abi(const cw_backend *b, char *why, size_t whylen)
{
    if (CW_ABI_MAJOR(b->abi_version) != CW_ABI_MAJOR(CW_ABI_VERSION)) {
        snprintf(why, whylen, "backend ABI %u.%u, suite ABI %u.%u", CW_ABI_MAJOR(b->abi_version),
                 b->abi_version & 0xffff, CW_ABI_MAJOR(CW_ABI_VERSION),
                 CW_ABI_VERSION & 0xffff);
        return -1;
    }
    if (b->size < offsetof(cw_backend, random)) {
        snprintf(why, whylen, "backend table of %u bytes lacks required entries", b->size);
        return -1;
    }
    return 0;
}

static void usage(FILE *to)
{
    fputs("usage: cw-conformance --backend NAME|PATH.so [--filter SUBSTR] [--seed N]\n"
          "                      [--list] [--requirements] [--certificate]\n"
          "                      [--json FILE] [--tap FILE] [--xml FILE]\n",
          to);
}

int main(int argc, char **argv)
{
    cwc_options opt = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i] ? argv[i] : ""; /* argv[i] < argc is never NULL */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--backend") && v)
            opt.backend = v, i++;
        else if (!strcmp(a, "--filter") && v)
            opt.filter = v, i++;
        else if (!strcmp(a, "--seed") && v)
            cwc_seed = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--json") && v)
            opt.json = v, i++;
        else if (!strcmp(a, "--tap") && v)
            opt.tap = v, i++;
        else if (!strcmp(a, "--xml") && v)
            opt.xml = v, i++;
        else if (!strcmp(a, "--list"))
            opt.list = 1;
        else if (!strcmp(a, "--requirements"))
            opt.requirements = 1;
        else if (!strcmp(a, "--certificate"))
            opt.certificate = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "cw-conformance: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (opt.list)
        return cwc_list(&opt);
    if (opt.requirements && !opt.backend)
        return cwc_print_requirements(NULL);
    if (!opt.backend) {
        usage(stderr);
        return 2;
    }
    char why[256];
    cwc_backend = load_backend(opt.backend, why, sizeof why);
    if (!cwc_backend || check_abi(cwc_backend, why, sizeof why) != 0) {
        fprintf(stderr, "cw-conformance: %s\n", why);
        return 2;
    }
    return cwc_run_suite(&opt);
}
