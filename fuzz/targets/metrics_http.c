/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics_http.c - the metrics endpoint of a parallel backend (MET-017,
 * MET-020) sent arbitrary bytes as a request over a real TCP connection,
 * its answer checked against a model of the rule written here from the
 * spec, apart from the backend's own parser.
 *
 * INPUT. The bytes of the request. THE MODEL: the head ends at the first
 * CRLF CRLF or LF LF within 8192 bytes; without one the endpoint answers
 * nothing. Otherwise the first line (its CR, if any, before the LF taken
 * off) must be METHOD SP TARGET SP "HTTP/1." DIGIT, the method 1 to 15
 * token characters, the target 1 to 1023 visible ones, or the answer is
 * 400; a method other than GET and HEAD is 405 with Allow; a path (before
 * '?') other than /metrics is 404; else 200, of type text/plain;
 * version=0.0.4 ending "# EOF". Every answer has Content-Length, which
 * the body matches (no body after a HEAD that got 200 or 404), and
 * Connection: close. The client sends only the head (or, without one,
 * at most 8192 bytes): bytes the server never reads would make its close a
 * reset. Any difference aborts with the request and the answer.
 *
 * One run serves every input of a process: it starts at the first one, on the native
 * backend, or on CW_FUZZ_BACKEND's when that has CW_CAP_PARALLEL (a backend
 * without it serves no endpoint, and the target then checks nothing).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS (FUZZ_NEEDS_METRICS | FUZZ_NEEDS_PARALLEL)
#include "driver/candidate.h"
#include "driver/target.h"

enum { HEAD_MAX = 8192, METHOD_MAX = 15, TARGET_MAX = 1023, ANSWER_MAX = 1 << 20 };

/* ---- The endpoint: one run, started once ------------------------------------------------ */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static struct sockaddr_in endpoint;
static int state; /* 0 starting, 1 serving, -1 none */

static void *serve_forever(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    int rc = cw_metrics_endpoint(ctx, address, sizeof address);
    pthread_mutex_lock(&lock);
    if (rc == CW_OK) {
        endpoint.sin_family = AF_INET;
        endpoint.sin_port = htons((uint16_t)atoi(strrchr(address, ':') + 1));
        inet_pton(AF_INET, "127.0.0.1", &endpoint.sin_addr);
    }
    state = rc == CW_OK ? 1 : -1;
    pthread_cond_broadcast(&ready);
    pthread_mutex_unlock(&lock);
    cw_counter_inc(cw_counter(ctx, "fuzz_inputs", "inputs seen")); /* a registry not empty */
    cw_sleep(ctx, CW_FOREVER);
    return NULL;
}

static void *run_thread(void *arg)
{
    const cw_backend *b = arg;
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.metrics_address = "127.0.0.1:0";
    cw_run_result res;
    if (cw_start(b, &cfg, serve_forever, NULL, &res) != CW_OK)
        fprintf(stderr, "metrics_http: the run ended: %s\n", res.message);
    pthread_mutex_lock(&lock);
    state = -1;
    pthread_cond_broadcast(&ready);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Whether an endpoint serves; starts the run the first time in this
 * process. A process forked after that (AFL++'s fork server starts after
 * its driver warmed the target up) has none of the run's threads: it
 * starts a run of its own. */
static bool serving(void)
{
    static pid_t started_in;
    pthread_mutex_lock(&lock);
    if (started_in != getpid()) {
        started_in = getpid();
        state = 0;
        const cw_backend *b =
            getenv("CW_FUZZ_BACKEND") ? fuzz_candidate(NULL) : cw_backend_native();
        pthread_t t;
        if (!(b->capabilities & CW_CAP_PARALLEL) ||
            pthread_create(&t, NULL, run_thread, (void *)b) != 0)
            state = -1;
        else
            pthread_detach(t);
    }
    while (state == 0)
        pthread_cond_wait(&ready, &lock);
    bool up = state == 1;
    pthread_mutex_unlock(&lock);
    return up;
}

/* ---- The model --------------------------------------------------------------------------- */

typedef struct expect {
    size_t send; /* the bytes to send */
    int status;  /* 0: no answer */
    bool body;   /* whether a body follows the head */
} expect;

/* The smallest k such that data[0, k) ends an empty line; 0 for none. */
static size_t head_end(const uint8_t *d, size_t n)
{
    for (size_t k = 2; k <= n && k <= HEAD_MAX; k++) {
        if (d[k - 2] == '\n' && d[k - 1] == '\n')
            return k;
        if (k >= 4 && memcmp(d + k - 4, "\r\n\r\n", 4) == 0)
            return k;
    }
    return 0;
}

static bool is_tchar(uint8_t c)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
           (c && memchr(extra, c, sizeof extra - 1));
}

/* The status the first line of a head asks for, and whether it is HEAD. */
static int line_status(const uint8_t *d, size_t head, bool *is_head)
{
    const uint8_t *lf = memchr(d, '\n', head);
    size_t len = (size_t)(lf - d);
    if (len > 0 && d[len - 1] == '\r')
        len--;
    const uint8_t *sp1 = memchr(d, ' ', len);
    const uint8_t *sp2 = sp1 ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - d)) : NULL;
    if (!sp1 || !sp2)
        return 400;
    size_t mlen = (size_t)(sp1 - d), tlen = (size_t)(sp2 - sp1 - 1);
    const uint8_t *version = sp2 + 1;
    size_t vlen = len - (size_t)(version - d);
    bool ok = mlen >= 1 && mlen <= METHOD_MAX && tlen >= 1 && tlen <= TARGET_MAX && vlen == 8 &&
              memcmp(version, "HTTP/1.", 7) == 0 && version[7] >= '0' && version[7] <= '9';
    for (size_t i = 0; ok && i < mlen; i++)
        ok = is_tchar(d[i]);
    for (size_t i = 0; ok && i < tlen; i++)
        ok = sp1[1 + i] >= 0x21 && sp1[1 + i] <= 0x7e;
    if (!ok)
        return 400;
    *is_head = mlen == 4 && memcmp(d, "HEAD", 4) == 0;
    if (!*is_head && !(mlen == 3 && memcmp(d, "GET", 3) == 0))
        return 405;
    const uint8_t *q = memchr(sp1 + 1, '?', tlen);
    size_t path = q ? (size_t)(q - sp1 - 1) : tlen;
    return path == 8 && memcmp(sp1 + 1, "/metrics", 8) == 0 ? 200 : 404;
}

static expect model(const uint8_t *d, size_t n)
{
    size_t head = head_end(d, n);
    if (!head)
        return (expect){n < HEAD_MAX ? n : HEAD_MAX, 0, false};
    bool is_head = false;
    int status = line_status(d, head, &is_head);
    bool body = !(is_head && (status == 200 || status == 404));
    return (expect){head, status, body};
}

/* ---- The exchange ----------------------------------------------------------------------- */

static const uint8_t *g_in;
static size_t g_len;

static _Noreturn void fail(const char *what, const char *answer)
{
    fprintf(stderr, "metrics_http: %s\nrequest (%zu bytes): \"", what, g_len);
    for (size_t i = 0; i < g_len && i < 600; i++)
        fprintf(stderr, g_in[i] >= 0x20 && g_in[i] < 0x7f && g_in[i] != '"' ? "%c" : "\\x%02x",
                g_in[i]);
    fprintf(stderr, "\"\nanswer:\n%.600s\n", answer ? answer : "(none)");
    abort();
}

/* Send `len` bytes, end the request, and read the answer to its end. */
static size_t exchange(const uint8_t *d, size_t len, char *answer)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&endpoint, sizeof endpoint) != 0)
        fail("cannot connect to the endpoint", NULL);
    for (size_t at = 0; at < len;) {
        ssize_t n = send(fd, d + at, len - at, MSG_NOSIGNAL);
        if (n <= 0)
            fail("the endpoint stopped reading a request it must read", NULL);
        at += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) != 1)
            fail("no answer and no close within 10 s", NULL);
        ssize_t n = recv(fd, answer + got, ANSWER_MAX - 1 - got, 0);
        if (n < 0)
            fail("the connection was reset", NULL);
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    answer[got] = '\0';
    return got;
}

static void check(const expect *e, const char *answer, size_t got)
{
    if (e->status == 0) {
        if (got != 0)
            fail("a head that never ended was answered", answer);
        return;
    }
    char status[16];
    snprintf(status, sizeof status, "HTTP/1.1 %d ", e->status);
    if (strncmp(answer, status, strlen(status)) != 0)
        fail(status, answer);
    const char *end = strstr(answer, "\r\n\r\n");
    const char *cl = strstr(answer, "\r\nContent-Length: ");
    if (!end || !cl || cl > end || !strstr(answer, "\r\nConnection: close\r\n"))
        fail("an answer without Content-Length or Connection: close", answer);
    size_t body = got - (size_t)(end + 4 - answer);
    size_t announced = strtoul(cl + 18, NULL, 10);
    if (body != (e->body ? announced : 0))
        fail("a body that is not what Content-Length announced", answer);
    if (e->status == 405 && !strstr(answer, "\r\nAllow: GET, HEAD\r\n"))
        fail("a 405 without Allow: GET, HEAD", answer);
    if (e->status == 200 && (!strstr(answer, "\r\nContent-Type: text/plain; version=0.0.4\r\n") ||
                             (e->body && strcmp(answer + got - 6, "# EOF\n") != 0)))
        fail("a 200 that is not the registry's text", answer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char answer[ANSWER_MAX];
    if (!serving())
        return 0;
    g_in = data;
    g_len = size;
    expect e = model(data, size);
    size_t got = exchange(data, e.send, answer);
    check(&e, answer, got);
    return 0;
}
