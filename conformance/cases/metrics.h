/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics.h - helpers shared by the metrics case files (spec/16-metrics.md).
 *
 * Every text a case encodes goes through cwc_encode, which checks the
 * shape [MET-006] asks of all of them and, when CWC_METRICS_DIR names a
 * directory, writes a copy there: `make check` then reads every copy with
 * an independent OpenMetrics parser (ci/openmetrics.py).
 */
#ifndef CWC_CASES_METRICS_H
#define CWC_CASES_METRICS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC
#define PAR CW_CAP_PARALLEL

static inline size_t cwc_count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The value of the series named `series` (with its labels, if any: the
 * text up to the space before the value), or -1 when the run's text shows
 * no such series or could not be encoded (MET-019). */
static inline long cwc_series_value(cw_ctx *ctx, const char *series)
{
    char *text = cw_metrics_encode(ctx);
    size_t len = strlen(series);
    long n = -1;
    for (const char *at = text; at && (at = strstr(at, series)) != NULL; at += len) {
        if ((at == text || at[-1] == '\n') && at[len] == ' ') {
            n = strtol(at + len + 1, NULL, 10);
            break;
        }
    }
    free(text);
    return n;
}

#define CWC_HAS(text, needle)                                                                      \
    ck_assert_msg(strstr((text), (needle)) != NULL, "expected '%s' in:\n%s", (needle), (text))
#define CWC_LACKS(text, needle)                                                                    \
    ck_assert_msg(strstr((text), (needle)) == NULL, "did not expect '%s' in:\n%s", (needle), (text))

/* Keep `text` for the parser check, named after the backend, the case's
 * process and `tag`. */
static inline void cwc_keep_text(const char *text, const char *tag)
{
    static unsigned seq;
    const char *dir = getenv("CWC_METRICS_DIR");
    if (!dir || !*dir)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s-%ld-%s-%u.om", dir, cwc_backend->name, (long)getpid(), tag,
             seq++);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The shape of every encoded text [MET-006]: lines ended by '\n', none
 * blank, and one "# EOF" line, the last. */
static inline void cwc_check_shape(const char *text)
{
    size_t len = strlen(text);
    ck_assert_msg(len >= 6 && strcmp(text + len - 6, "# EOF\n") == 0, "no final # EOF:\n%s", text);
    ck_assert_msg(cwc_count(text, "# EOF") == 1, "more than one # EOF:\n%s", text);
    ck_assert_msg(text[0] != '\n' && !strstr(text, "\n\n"), "a blank line in:\n%s", text);
}

static inline char *cwc_encode_at(cw_ctx *ctx, const char *tag)
{
    char *text = cw_metrics_encode(ctx);
    ck_assert_msg(text != NULL, "the backend has no metrics");
    cwc_check_shape(text);
    cwc_keep_text(text, tag);
    return text;
}

/* Encode the run's metrics; the caller frees the text. */
#define cwc_encode(ctx) cwc_encode_at((ctx), __func__)

/* The sum of runtime_tasks_running over tasks (kind="Task") whose name
 * starts with `prefix`: the original's count_running_tasks. */
static inline long cwc_count_running(cw_ctx *ctx, const char *prefix)
{
    char *text = cwc_encode(ctx);
    long total = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "runtime_tasks_running{", 22) != 0 || !strstr(line, "kind=\"Task\""))
            continue;
        const char *name = strstr(line, "name=\"");
        if (!name || strncmp(name + 6, prefix, strlen(prefix)) != 0)
            continue;
        total += strtol(strrchr(line, ' ') + 1, NULL, 10);
    }
    free(text);
    return total;
}

/* Release a context made for one registration. */
static inline cw_metric *cwc_counter_in(cw_ctx *ctx, const char *name, const char *help)
{
    cw_metric *m = cw_counter(ctx, name, help);
    cw_ctx_release(ctx);
    return m;
}

#endif
