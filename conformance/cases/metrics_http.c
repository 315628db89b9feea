/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics_http.c - the /metrics endpoint of a parallel backend
 * ([MET-017]), scraped over loopback by a plain socket client and, when
 * CWC_METRICS_DIR is set, by curl as well (its response is kept for the
 * parser check of `make check`).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "cases/metrics.h"

extern char **environ;

/* Connect to "a.b.c.d:port" or "[v6]:port"; -1 when nothing answers. */
/* A socket connected to `address`, or -1; with `rcvbuf` > 0 its receive
 * buffer is set that small before it connects (so the window stays small). */
static int connect_sized(const char *address, int rcvbuf)
{
    char host[64];
    const char *colon = strrchr(address, ':');
    ck_assert_ptr_nonnull(colon);
    bool v6 = address[0] == '[';
    snprintf(host, sizeof host, "%.*s", (int)(colon - address) - (v6 ? 2 : 0), address + v6);
    uint16_t port = htons((uint16_t)atoi(colon + 1));
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (v6) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = port;
        ck_assert_int_eq(inet_pton(AF_INET6, host, &a6->sin6_addr), 1);
    } else {
        a4->sin_family = AF_INET;
        a4->sin_port = port;
        ck_assert_int_eq(inet_pton(AF_INET, host, &a4->sin_addr), 1);
    }
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    if (rcvbuf > 0)
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf), 0);
    socklen_t len = v6 ? sizeof *a6 : sizeof *a4;
    if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int connect_to(const char *address)
{
    return connect_sized(address, 0);
}

/* Send `request`, end the sending side when `end` is set, and read the
 * whole response (the server closes). The caller frees it. */
static char *exchange_ending(const char *address, const char *request, bool end)
{
    int fd = connect_to(address);
    ck_assert_msg(fd >= 0, "cannot connect to %s", address);
    size_t len = strlen(request);
    ck_assert_int_eq(send(fd, request, len, MSG_NOSIGNAL), (ssize_t)len);
    if (end)
        ck_assert_int_eq(shutdown(fd, SHUT_WR), 0);
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (;;) {
        if (used + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            ck_assert_ptr_nonnull(grown);
            buf = grown;
        }
        ssize_t n = recv(fd, buf + used, cap - 1 - used, 0);
        ck_assert_int_ge(n, 0);
        if (n == 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    close(fd);
    return buf;
}

static char *exchange(const char *address, const char *request)
{
    return exchange_ending(address, request, false);
}

/* Run `root` with the endpoint on a port of the system's choosing. */
static void run_with_endpoint(cw_task_fn root, void *arg)
{
    cw_config cfg = cwc_config();
    cfg.metrics_address = "127.0.0.1:0";
    cwc_run_ok(&cfg, root, arg);
}

/* The endpoint's address into `arg` (64 bytes), and one scrape of it,
 * which the endpoint closes first: its side of the connection lingers in
 * TIME_WAIT after the run. */
static void *scraped_root(cw_ctx *ctx, void *arg)
{
    char *address = arg;
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, 64), CW_OK);
    char *response = exchange(address, "GET /metrics HTTP/1.1\r\n\r\n");
    ck_assert_msg(strncmp(response, "HTTP/1.1 200", 12) == 0, "%s", response);
    free(response);
    return NULL;
}

/* The port of an endpoint that ended with its run is served again by the
 * next run at once, though a connection it served lingers [MET-017]. */
CWC_CASE(metrics_http_port_served_again_at_once, "metrics", "MET-017", PAR)
{
    char first[64], again[64];
    run_with_endpoint(scraped_root, first);
    cw_config cfg = cwc_config();
    cfg.metrics_address = first;
    cwc_run_ok(&cfg, scraped_root, again);
    ck_assert_str_eq(again, first);
}

/* Scrape with curl into the kept directory: the body for the parser, the
 * head for the content type check. */
static void scrape_with_curl(const char *address)
{
    const char *dir = getenv("CWC_METRICS_DIR");
    if (!dir || !*dir)
        return;
    char url[128], body[1024], head[1024];
    snprintf(url, sizeof url, "http://%s/metrics", address);
    snprintf(body, sizeof body, "%s/%s-%ld-curl.om", dir, cwc_backend->name, (long)getpid());
    snprintf(head, sizeof head, "%s/%s-%ld-curl.headers", dir, cwc_backend->name, (long)getpid());
    char *argv[] = {"curl", "-sS", "--fail", "--max-time", "10", "-D", head, "-o", body, url, NULL};
    pid_t pid;
    ck_assert_msg(posix_spawnp(&pid, "curl", NULL, NULL, argv, environ) == 0,
                  "curl is needed to scrape the endpoint (sh ci/deps.sh)");
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "curl failed: %d", status);
}

static const char *body_of(const char *response)
{
    const char *body = strstr(response, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    return body + 4;
}

static void *scrape_root(cw_ctx *ctx, void *arg)
{
    char *address = arg;
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, 64), CW_OK);
    char tiny[4];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, tiny, sizeof tiny), CW_ERR_INVALID);
    /* The NUL needs room too: a buffer of exactly the text's length is short. */
    char exact[64];
    size_t n = strlen(address);
    ck_assert_int_eq(cw_metrics_endpoint(ctx, exact, n), CW_ERR_INVALID);
    /* Filled with a nonzero byte first: the NUL must be the call's own. */
    memset(exact, 'x', sizeof exact);
    ck_assert_int_eq(cw_metrics_endpoint(ctx, exact, n + 1), CW_OK);
    ck_assert_int_eq(exact[n], '\0');
    ck_assert_str_eq(exact, address);
    cw_ctx *c = cw_with_attribute(cw_child(ctx, "web"), "quote", "say \"hi\"");
    cw_metric *m = cw_counter(c, "scrapes", "scrapes seen");
    cw_counter_add(m, 3);

    char *ok = exchange(address, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    ck_assert_msg(strncmp(ok, "HTTP/1.1 200 OK\r\n", 17) == 0, "response:\n%s", ok);
    CWC_HAS(ok, "\r\nContent-Type: text/plain; version=0.0.4\r\n");
    const char *body = body_of(ok);
    char length[64];
    snprintf(length, sizeof length, "\r\nContent-Length: %zu\r\n", strlen(body));
    CWC_HAS(ok, length);
    cwc_check_shape(body);
    cwc_keep_text(body, "http");
    CWC_HAS(body, "\nweb_scrapes_total{quote=\"say \\\"hi\\\"\"} 3\n");
    free(ok);

    char *head = exchange(address, "HEAD /metrics?x=1 HTTP/1.1\r\n\r\n");
    ck_assert_msg(strncmp(head, "HTTP/1.1 200 OK\r\n", 17) == 0, "response:\n%s", head);
    ck_assert_str_eq(body_of(head), "");
    free(head);
    char *missing = exchange(address, "GET / HTTP/1.1\r\n\r\n");
    ck_assert_msg(strncmp(missing, "HTTP/1.1 404 ", 13) == 0, "response:\n%s", missing);
    free(missing);
    char *post = exchange(address, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    ck_assert_msg(strncmp(post, "HTTP/1.1 405 ", 13) == 0, "response:\n%s", post);
    free(post);
    scrape_with_curl(address);
    cw_ctx_release(c);
    return NULL;
}

CWC_CASE(metrics_http_scrape, "metrics", "MET-017", PAR)
{
    char address[64] = "";
    run_with_endpoint(scrape_root, address);
    /* Nothing is served once the run is over. */
    int fd = connect_to(address);
    if (fd >= 0)
        close(fd);
    ck_assert_int_lt(fd, 0);
}

/* Over IPv6 too: the endpoint names the address it listens on, bracketed,
 * with its real port, and answers there. */
static void *scrape_v6_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    ck_assert_msg(strncmp(address, "[::1]:", 6) == 0, "endpoint %s", address);
    ck_assert_int_gt(atoi(address + 6), 0);
    cw_counter_add(cw_counter(ctx, "v6", "over IPv6"), 6);
    char *ok = exchange(address, "GET /metrics HTTP/1.1\r\n\r\n");
    ck_assert_msg(strncmp(ok, "HTTP/1.1 200 OK\r\n", 17) == 0, "response:\n%s", ok);
    CWC_HAS(body_of(ok), "\nv6_total 6\n");
    free(ok);
    return NULL;
}

CWC_CASE(metrics_http_scrape_ipv6, "metrics", "MET-017", PAR)
{
    cw_config cfg = cwc_config();
    cfg.metrics_address = "[::1]:0";
    cwc_run_ok(&cfg, scrape_v6_root, NULL);
}

static void *must_not_run(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    ck_assert_msg(0, "the root ran although the endpoint could not be served");
    return NULL;
}

static void *no_endpoint_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_ERR_UNSUPPORTED);
    return NULL;
}

static void *served_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    return NULL;
}

CWC_CASE(metrics_http_settings, "metrics", "MET-017", PAR)
{
    cw_run_result res;
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, no_endpoint_root, NULL);  /* off by default */
    cfg.metrics_address = "127.0.0.1:0000000"; /* digits alone: zeros lead any number */
    cwc_run_ok(&cfg, served_root, NULL);

    static const char *const not_numeric[] = {
        "localhost:http",
        "127.0.0.1:65536",
        "127.0.0.1:0x50",
        "127.0.0.1:+80",
        "127.0.0.1: 80",
        "127.0.0.1:",
        "127.0.0.1:80 ",
        "[::1]:99999",
        "::1:80",
        "[]:80",
        "127.0.0.1:0000065536",
        /* IPv6 only in brackets both sides: one without its '[' is no host */
        "a::1]:0",
        "[::1:0",
        /* hosts longer than any address: 63 and 64 characters */
        "%s:80",
        "%s1:80",
    };
    char ones[64], text[80];
    memset(ones, '1', 63);
    ones[63] = '\0';
    for (size_t i = 0; i < sizeof not_numeric / sizeof not_numeric[0]; i++) {
        snprintf(text, sizeof text, not_numeric[i], ones);
        cfg.metrics_address = text;
        ck_assert_msg(cwc_run(&cfg, must_not_run, NULL, &res) == CW_ERR_INVALID,
                      "metrics_address \"%s\" was not refused", text);
        CWC_HAS(res.message, "metrics_address");
    }
    /* The highest port is a number like any other: served, or busy. */
    cfg.metrics_address = "127.0.0.1:65535";
    int rc = cwc_run(&cfg, served_root, NULL, &res);
    ck_assert_msg(rc == CW_OK || rc == CW_ERR_BIND_FAILED,
                  "metrics_address \"127.0.0.1:65535\" gave %d (%s)", rc, res.message);

    int busy = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;
    ck_assert_int_eq(bind(busy, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(busy, 1), 0);
    ck_assert_int_eq(getsockname(busy, (struct sockaddr *)&sa, &salen), 0);
    char address[64];
    snprintf(address, sizeof address, "127.0.0.1:%u", ntohs(sa.sin_port));
    cfg.metrics_address = address;
    ck_assert_int_eq(cwc_run(&cfg, must_not_run, NULL, &res), CW_ERR_BIND_FAILED);
    CWC_HAS(res.message, address);
    close(busy);
}

CWC_CASE(metrics_http_ignored_without_threads, "metrics", "MET-017", DET)
{
    cw_config cfg = cwc_config();
    cfg.metrics_address = "not an address";
    cwc_run_ok(&cfg, no_endpoint_root, NULL);
}

/* The body after the head, and the length the head announces for it. */
static void check_length(const char *response)
{
    const char *cl = strstr(response, "\r\nContent-Length: ");
    ck_assert_msg(cl != NULL, "no Content-Length:\n%s", response);
    ck_assert_uint_eq(strtoul(cl + 18, NULL, 10), strlen(body_of(response)));
}

static void *bad_request_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    static const char *const garbage[] = {"garbage\r\n\r\n", "\r\n\r\n", "GET\r\n\r\n"};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        char *bad = exchange(address, garbage[i]);
        ck_assert_msg(strncmp(bad, "HTTP/1.1 400 ", 13) == 0, "response:\n%s", bad);
        check_length(bad);
        ck_assert_uint_gt(strlen(body_of(bad)), 0);
        free(bad);
    }
    char *missing = exchange(address, "GET /nothing HTTP/1.1\r\n\r\n");
    check_length(missing);
    free(missing);
    return NULL;
}

CWC_CASE(metrics_http_bad_request, "metrics", "MET-017", PAR)
{
    run_with_endpoint(bad_request_root, NULL);
}

/* ---- The request line, read strictly [MET-020] ------------------------------------------ */

typedef struct request_case {
    const char *request;
    const char *status; /* the status line's code and a space */
    bool body;          /* whether a body follows the head */
} request_case;

static const request_case request_cases[] = {
    {"GET /metrics HTTP/1.1\r\n\r\n", "200 ", true},
    {"GET /metrics HTTP/1.0\n\n", "200 ", true},
    {"GET /metrics?name[]=x HTTP/1.1\r\nHost: a\r\n\r\n", "200 ", true},
    {"HEAD /metrics HTTP/1.1\r\n\r\n", "200 ", false},
    {"HEAD /elsewhere HTTP/1.1\r\n\r\n", "404 ", false},
    {"GET /metrics/ HTTP/1.1\r\n\r\n", "404 ", true},
    {"GET /metricsx HTTP/1.1\r\n\r\n", "404 ", true},
    {"GET /metricz HTTP/1.1\r\n\r\n", "404 ", true}, /* its length, one byte off */
    {"GET metrics HTTP/1.1\r\n\r\n", "404 ", true},
    {"get /metrics HTTP/1.1\r\n\r\n", "405 ", true},
    {"POST /metrics HTTP/1.1\r\n\r\n", "405 ", true},
    {"M-SEARCH! /metrics HTTP/1.1\r\n\r\n", "405 ", true},
    {"GET  /metrics HTTP/1.1\r\n\r\n", "400 ", true},
    {"GET  HTTP/1.1\r\n\r\n", "400 ", true}, /* an empty target */
    {" GET /metrics HTTP/1.1\r\n\r\n", "400 ", true},
    {" /metrics HTTP/1.1\r\n\r\n", "400 ", true}, /* an empty method is no token */
    {"GET\t/metrics HTTP/1.1\r\n\r\n", "400 ", true},
    {"GET /metrics HTTP/1.1 \r\n\r\n", "400 ", true},
    {"GET /metrics HTTP/2.0\r\n\r\n", "400 ", true},
    {"GET /metrics HTTP/1.x\r\n\r\n", "400 ", true},
    {"GET /metrics HTTP/1.12\r\n\r\n", "400 ", true},
    {"GET /metrics http/1.1\r\n\r\n", "400 ", true},
    {"GET /metrics\r\n\r\n", "400 ", true},
    {"G(T /metrics HTTP/1.1\r\n\r\n", "400 ", true},
    {"GET /met\x7frics HTTP/1.1\r\n\r\n", "400 ", true},
    {"GETGETGETGETGETG /metrics HTTP/1.1\r\n\r\n", "400 ", true}, /* a 16-byte method */
    {"GETGETGETGETGET /metrics HTTP/1.1\r\n\r\n", "405 ", true},  /* 15 bytes */
    {"X /metrics HTTP/1.1\r\n\r\n", "405 ", true},                /* a 1-byte method */
    {"zZ09~ /metrics HTTP/1.1\r\n\r\n", "405 ", true},            /* each end of tchar's ranges */
    {"GET /metrics HTTP/1./\r\n\r\n", "400 ", true},              /* '/' sorts just below '0' */
    {"GET /metrics HTTP/1.:\r\n\r\n", "400 ", true},              /* ':' just above '9' */
    {"GET /metrics HTTP/1.9\r\n\r\n", "200 ", true},              /* '9' itself is a digit */
    {"GET /metrics HTTP/1,1\r\n\r\n", "400 ", true},              /* the point, not any byte */
    {"GET /metrics HTTP/1.1\nHost: a\n\n", "200 ", true},         /* bare LF line ends */
};

/* A request line whose target is `len` bytes: "/" then 'a's. */
static char *long_target(size_t len)
{
    static const char tail[] = " HTTP/1.1\r\n\r\n";
    char *r = malloc(4 + len + sizeof tail);
    ck_assert_ptr_nonnull(r);
    memcpy(r, "GET /", 5);
    memset(r + 5, 'a', len - 1);
    memcpy(r + 4 + len, tail, sizeof tail);
    return r;
}

static void expect_answer(const char *address, const char *request, const char *status, bool body)
{
    char *got = exchange(address, request);
    ck_assert_msg(strncmp(got, "HTTP/1.1 ", 9) == 0 && strncmp(got + 9, status, 4) == 0,
                  "%s\nwas answered:\n%s", request, got);
    ck_assert_msg(strstr(got, "\r\nConnection: close\r\n") != NULL, "no Connection: close");
    const char *cl = strstr(got, "\r\nContent-Length: ");
    ck_assert_msg(cl != NULL, "no Content-Length:\n%s", got);
    size_t announced = strtoul(cl + 18, NULL, 10);
    ck_assert_uint_eq(strlen(body_of(got)), body ? announced : 0);
    if (strncmp(status, "405", 3) == 0)
        ck_assert_msg(strstr(got, "\r\nAllow: GET, HEAD\r\n") != NULL, "405 without Allow");
    free(got);
}

static void *request_line_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    for (size_t i = 0; i < sizeof request_cases / sizeof *request_cases; i++)
        expect_answer(address, request_cases[i].request, request_cases[i].status,
                      request_cases[i].body);
    char *at_limit = long_target(1023), *over = long_target(1024);
    expect_answer(address, at_limit, "404 ", true);
    expect_answer(address, over, "400 ", true);
    free(at_limit);
    free(over);
    return NULL;
}

CWC_CASE(metrics_http_request_line, "metrics", "MET-020 MET-017", PAR)
{
    run_with_endpoint(request_line_root, NULL);
}

/* A head that never ends within 8192 bytes gets no answer; one that ends
 * at exactly 8192 does. */
static char *padded_head(size_t total, bool ended)
{
    char *r = malloc(total + 1);
    ck_assert_ptr_nonnull(r);
    static const char line[] = "GET /metrics HTTP/1.1\r\nX: ";
    memcpy(r, line, sizeof line - 1);
    memset(r + sizeof line - 1, 'x', total - (sizeof line - 1));
    if (ended)
        memcpy(r + total - 4, "\r\n\r\n", 4);
    r[total] = '\0';
    return r;
}

/* A client that goes on sending past 8192 bytes with no end of head, in
 * pieces: the endpoint reads at most 8192 of them and closes without an
 * answer (MET-020), whatever arrives after; what it reads later never
 * lands past what it holds. The pause only makes a piece likely to be
 * read before the rest arrives; no verdict depends on it. Sends after the
 * endpoint closed may fail, and the end may come as a reset. */
static void overlong_head(const char *address)
{
    enum { FIRST = 4096, REST = 3 * 8192 };
    char *bytes = padded_head(FIRST + REST, false);
    int fd = connect_to(address);
    ck_assert_msg(fd >= 0, "cannot connect to %s", address);
    ck_assert_int_eq(send(fd, bytes, FIRST, MSG_NOSIGNAL), FIRST);
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    for (size_t at = FIRST; at < FIRST + REST;) {
        ssize_t n = send(fd, bytes + at, FIRST + REST - at, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        at += (size_t)n;
    }
    char answer[64];
    ssize_t got;
    while ((got = recv(fd, answer, sizeof answer, 0)) < 0 && errno == EINTR)
        ;
    ck_assert_msg(got <= 0, "a head of %d bytes without its end was answered:\n%.*s", FIRST + REST,
                  (int)got, answer);
    close(fd);
    free(bytes);
}

static void *head_limit_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    char *fits = padded_head(8192, true), *endless = padded_head(8192, false);
    expect_answer(address, fits, "200 ", true);
    char *none = exchange(address, endless);
    ck_assert_msg(none[0] == '\0', "a head of 8192 bytes without its end was answered:\n%.80s",
                  none);
    free(none);
    free(fits);
    free(endless);
    overlong_head(address);
    /* A connection that ends before its head does gets no answer either. */
    none = exchange_ending(address, "GET /metrics HTTP/1.1\r\n", true);
    ck_assert_msg(none[0] == '\0', "a head cut short by the end was answered:\n%.80s", none);
    free(none);
    /* The same with LF line ends, right after a complete head of the same
     * first line: the head ends at the empty line the client sent, never at
     * a byte it did not send (such as one left from the earlier request). */
    expect_answer(address, "GET /metrics HTTP/1.1\n\n", "200 ", true);
    none = exchange_ending(address, "GET /metrics HTTP/1.1\n", true);
    ck_assert_msg(none[0] == '\0', "a head of one LF-ended line was answered:\n%.80s", none);
    free(none);
    /* A head ends at CRLF CRLF or LF LF only: CRLF CR and another byte is
     * no empty line, so this head never completed. */
    none = exchange_ending(address, "GET /metrics HTTP/1.1\r\nX: a\r\n\rb", true);
    ck_assert_msg(none[0] == '\0', "a head ended by CR LF CR and a byte was answered:\n%.80s",
                  none);
    free(none);
    return NULL;
}

/* Metrics whose text is about 8 MiB, more than a send buffer holds. */
enum { LONG_METRICS = 8192 };

/* Registers LONG_METRICS counters with long help (their handles in `kept`
 * unless NULL: the run releases them), asks the endpoint at `address` for
 * the text through a small receive buffer, and returns the connection once
 * the answer has begun. */
static int long_answer_begun(cw_ctx *ctx, cw_metric **kept, char *address, size_t len)
{
    static char help[1024];
    memset(help, 'h', sizeof help - 1);
    for (int i = 0; i < LONG_METRICS; i++) {
        char name[32];
        snprintf(name, sizeof name, "long_%d", i);
        cw_metric *m = cw_counter(ctx, name, help);
        if (kept)
            kept[i] = m;
    }
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, len), CW_OK);
    int fd = connect_sized(address, 4096); /* far less than the answer */
    ck_assert_int_ge(fd, 0);
    static const char get[] = "GET /metrics HTTP/1.1\r\n\r\n";
    ck_assert_int_eq(send(fd, get, sizeof get - 1, MSG_NOSIGNAL), (ssize_t)(sizeof get - 1));
    char first[16];
    ck_assert_int_gt(recv(fd, first, sizeof first, 0), 0); /* the answer has begun */
    return fd;
}

/* A client that asks for a long answer and resets the connection without
 * reading it: the endpoint gives that connection up and answers the next. */
static void *reset_mid_answer_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static cw_metric *m[LONG_METRICS];
    char address[64];
    int fd = long_answer_begun(ctx, m, address, sizeof address);
    struct linger reset = {1, 0};
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
    close(fd);
    expect_answer(address, "HEAD /metrics HTTP/1.1\r\n\r\n", "200 ", false);
    for (int i = 0; i < LONG_METRICS; i++)
        cw_metric_release(m[i]);
    return NULL;
}

/* A client that asks for a long answer and takes none of it, its
 * connection left open: the run still ends, the endpoint closing the
 * connection rather than waiting for the client [MET-020]. The root
 * hands the connection to the case, which keeps it until cw_start has
 * returned. */
static void *stalled_answer_root(cw_ctx *ctx, void *arg)
{
    char address[64];
    /* The metrics are left to the run to release. */
    *(int *)arg = long_answer_begun(ctx, NULL, address, sizeof address);
    return NULL;
}

CWC_CASE(metrics_http_run_ends_with_an_answer_not_taken, "metrics", "MET-020 MET-017", PAR)
{
    int fd = -1;
    run_with_endpoint(stalled_answer_root, &fd);
    /* The rest of what was sent, then the end: the connection is closed. */
    struct timeval limit = {60, 0};
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit), 0);
    static char rest[65536];
    ssize_t n;
    while ((n = recv(fd, rest, sizeof rest, 0)) > 0)
        continue;
    ck_assert_msg(n == 0 || errno == ECONNRESET,
                  "the connection is still open after the run (recv: %s)", strerror(errno));
    close(fd);
}

CWC_CASE(metrics_http_client_reset_mid_answer, "metrics", "MET-017 MET-020", PAR)
{
    run_with_endpoint(reset_mid_answer_root, NULL);
}

CWC_CASE(metrics_http_head_limit, "metrics", "MET-020", PAR)
{
    run_with_endpoint(head_limit_root, NULL);
}

/* ---- A head that comes in pieces, and one that never comes [MET-020, MET-017] ----------- */

static void send_text_all(int fd, const char *text)
{
    size_t len = strlen(text);
    ck_assert_int_eq(send(fd, text, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* A head sent in three pieces, a pause between them so the endpoint reads
 * each on its own, is one request: it gets its answer. */
static void *pieces_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    int fd = connect_to(address);
    ck_assert_msg(fd >= 0, "cannot connect to %s", address);
    static const char *const pieces[] = {"GET /metrics HTTP/1.1\r\n", "Host: x\r\n", "\r\n"};
    for (size_t i = 0; i < 3; i++) {
        if (i > 0)
            ck_assert_int_eq(cw_sleep(ctx, 50 * CW_MSEC), CW_OK);
        send_text_all(fd, pieces[i]);
    }
    char got[13];
    size_t used = 0;
    while (used < 12) {
        ssize_t n = recv(fd, got + used, 12 - used, 0);
        ck_assert_msg(n > 0, "a head sent in pieces got no answer");
        used += (size_t)n;
    }
    got[12] = '\0';
    ck_assert_str_eq(got, "HTTP/1.1 200");
    close(fd);
    return NULL;
}

CWC_CASE(metrics_http_head_in_pieces, "metrics", "MET-020 MET-017", PAR)
{
    run_with_endpoint(pieces_root, NULL);
}

/* A client of the run's endpoint that sent part of a head, "GET /met",
 * and no more; its address in `address`. */
static int partial_head_client(cw_ctx *ctx, char address[64])
{
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, 64), CW_OK);
    int fd = connect_to(address);
    ck_assert_msg(fd >= 0, "cannot connect to %s", address);
    send_text_all(fd, "GET /met");
    return fd;
}

/* The endpoint closed `fd` without an answer: an end of stream, or a
 * reset for the bytes it left unread [MET-020]. */
static void expect_closed_unanswered(int fd, const char *who)
{
    char got[64];
    ssize_t n;
    while ((n = recv(fd, got, sizeof got, 0)) < 0 && errno == EINTR)
        ;
    ck_assert_msg(n <= 0, "%s was answered: %.*s", who, (int)n, got);
    close(fd);
}

/* A client that sent part of a head and then reset its connection: the
 * endpoint gives it up and answers the next client [MET-020]. */
static void *reset_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    int fd = partial_head_client(ctx, address);
    ck_assert_int_eq(cw_sleep(ctx, 50 * CW_MSEC), CW_OK); /* the endpoint takes it meanwhile */
    struct linger reset = {1, 0};
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
    close(fd);
    char *ok = exchange(address, "GET /metrics HTTP/1.1\r\n\r\n");
    ck_assert_msg(strncmp(ok, "HTTP/1.1 200", 12) == 0, "after a reset client: %.40s", ok);
    free(ok);
    return NULL;
}

CWC_CASE(metrics_http_reset_client_then_another, "metrics", "MET-020 MET-017", PAR)
{
    run_with_endpoint(reset_root, NULL);
}

/* A client that sent part of a head and fell silent while the run goes
 * on: after 5 seconds the endpoint closes it without an answer [MET-020].
 * The root waits for that by polling, as long as it takes, so the
 * endpoint, whatever serves it, is not held up. */
static void *given_up_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    int fd = partial_head_client(ctx, address);
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 0) == 0) /* readable once closed: the recv below waits for nothing */
        ck_assert_int_eq(cw_sleep(ctx, 100 * CW_MSEC), CW_OK);
    expect_closed_unanswered(fd, "a silent client");
    return NULL;
}

CWC_CASE(metrics_http_silent_client_given_up, "metrics", "MET-020", PAR)
{
    run_with_endpoint(given_up_root, NULL);
}

/* A client that sent part of a head and fell silent when the run ends: the
 * run ends all the same (the endpoint stops with it), long before the
 * endpoint would give the client up. The client closes only after. */
static void *silent_root(cw_ctx *ctx, void *arg)
{
    char address[64];
    int fd = partial_head_client(ctx, address);
    ck_assert_int_eq(cw_sleep(ctx, 100 * CW_MSEC), CW_OK); /* the endpoint takes it meanwhile */
    *(int *)arg = fd;
    return NULL;
}

CWC_CASE(metrics_http_run_ends_with_a_silent_client, "metrics", "MET-017 MET-020", PAR)
{
    int fd = -1;
    run_with_endpoint(silent_root, &fd);
    ck_assert_int_ge(fd, 0);
    expect_closed_unanswered(fd, "a head cut short by the run's end");
}
