/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics_http.c - GET /metrics over HTTP/1.1, on a thread of its own.
 *
 * A scrape is rare and small, so one thread serves one connection at a
 * time: read the request head, answer with the encoded registry, close.
 * The thread is apart from the workers and the reactor so that a slow or
 * silent client never holds up a task or a timer, and every wait on a
 * client is bounded (CLIENT_TIMEOUT_MS) and also watches the stop eventfd,
 * so the end of a run is never held up either.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "native/http_request.h"
#include "native/native.h"
#include "native/os.h"

#define CLIENT_TIMEOUT_MS 5000

/* A port in decimal digits alone, any number of them, at most 65535
 * (strtoul would also take blanks, a sign, and with base 0 hexadecimal).
 * The value stops growing once above the limit, so it cannot wrap. */
static bool parse_port(const char *s, unsigned *port)
{
    unsigned v = 0;
    size_t n = 0;
    for (; s[n] >= '0' && s[n] <= '9'; n++)
        if (v <= 65535)
            v = v * 10 + (unsigned)(s[n] - '0');
    *port = v;
    return n > 0 && s[n] == '\0' && v <= 65535;
}

/* "1.2.3.4:80" or "[::1]:80" into `sa`; false when it is neither. */
static bool parse_address(const char *text, struct sockaddr_storage *sa, socklen_t *len)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof host)
        return false;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    unsigned port;
    if (!parse_port(colon + 1, &port))
        return false;
    memset(sa, 0, sizeof *sa);
    size_t hlen = strlen(host);
    if (hlen > 2 && host[0] == '[' && host[hlen - 1] == ']') {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
        host[hlen - 1] = '\0';
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof *a6;
        return inet_pton(AF_INET6, host + 1, &a6->sin6_addr) == 1;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    *len = sizeof *a4;
    return inet_pton(AF_INET, host, &a4->sin_addr) == 1;
}

/* The bound address as "host:port", for cw_metrics_endpoint. */
static void format_address(int fd, char *out, size_t len)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof sa;
    char host[INET6_ADDRSTRLEN] = "";
    memset(&sa, 0, sizeof sa);
    if (getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
        snprintf(out, len, "?");
        return;
    }
    if (sa.ss_family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&sa;
        inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof host);
        snprintf(out, len, "[%s]:%u", host, ntohs(a6->sin6_port));
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&sa;
        inet_ntop(AF_INET, &a4->sin_addr, host, sizeof host);
        snprintf(out, len, "%s:%u", host, ntohs(a4->sin_port));
    }
}

/* Wait until `fd` is ready for `events`; false on timeout, error or stop. */
static bool wait_for(const cw_metrics_http *h, int fd, short events)
{
    struct pollfd p[2] = {{fd, events, 0}, {h->stop_fd, POLLIN, 0}};
    int k;
    do
        k = poll(p, 2, CLIENT_TIMEOUT_MS);
    while (k < 0 && errno == EINTR);
    return k > 0 && !(p[1].revents & POLLIN) && (p[0].revents & events);
}

static bool send_all(const cw_metrics_http *h, int fd, const char *data, size_t len)
{
    while (len) {
        if (!wait_for(h, fd, POLLOUT))
            return false;
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* Read until the empty line that ends the request head; the head's
 * length, or 0 when the client went, fell silent or sent `cap` bytes
 * without one [MET-020]. */
static size_t read_head(const cw_metrics_http *h, int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len < cap) {
        if (!wait_for(h, fd, POLLIN))
            return 0;
        ssize_t n = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            return 0;
        len += (size_t)n;
        size_t head = cw_http_head_len(buf, len);
        if (head)
            return head;
    }
    return 0;
}

static void respond(const cw_metrics_http *h, int fd, const char *status, const char *type,
                    const char *extra, const char *body, bool head_only)
{
    char head[256];
    size_t blen = strlen(body);
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                     "Connection: close\r\n\r\n",
                     status, type, blen, extra);
    if (send_all(h, fd, head, (size_t)n) && !head_only)
        send_all(h, fd, body, blen);
}

#define TEXT "text/plain; charset=utf-8"

/* One request: the answer its head asks for [MET-017, MET-020]. */
static void serve(const cw_metrics_http *h, int fd)
{
    char req[CW_HTTP_HEAD_MAX];
    size_t len = read_head(h, fd, req, sizeof req);
    if (!len)
        return;
    bool head_only;
    switch (cw_http_request_read(req, len, &head_only)) {
    case CW_HTTP_UNREADABLE:
        respond(h, fd, "400 Bad Request", TEXT, "", "bad request\n", false);
        return;
    case CW_HTTP_METHOD:
        respond(h, fd, "405 Method Not Allowed", TEXT, "Allow: GET, HEAD\r\n",
                "method not allowed\n", false);
        return;
    case CW_HTTP_ELSEWHERE:
        respond(h, fd, "404 Not Found", TEXT, "", "not found\n", head_only);
        return;
    case CW_HTTP_METRICS:
        break;
    }
    char *body = cw_registry_encode(cw_metrics_of(h->rt)->reg);
    if (!body) { /* MET-019: no memory for the text */
        respond(h, fd, "503 Service Unavailable", TEXT, "", "out of memory\n", head_only);
        return;
    }
    respond(h, fd, "200 OK", "text/plain; version=0.0.4", "", body, head_only);
    free(body);
}

static void *http_thread(void *arg)
{
    cw_metrics_http *h = arg;
    for (;;) {
        struct pollfd p[2] = {{h->listen_fd, POLLIN, 0}, {h->stop_fd, POLLIN, 0}};
        if (poll(p, 2, -1) < 0 && errno != EINTR) {
            /* The kernel found no memory for the wait: try again soon.
             * Any other error is a descriptor of ours gone bad. */
            if (errno != ENOMEM)
                cw_fatal("metrics endpoint: poll failed: errno %d", errno);
            nanosleep(&(struct timespec){0, 1000000}, NULL);
            continue;
        }
        if (p[1].revents & POLLIN)
            return NULL;
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0 && errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM)
            continue; /* the client gave up already: try the next */
        if (fd < 0) {
            /* No descriptor or memory for it: the connection waits in the
             * queue, and the listener stays readable. Waiting for the stop
             * a while keeps this thread from spinning on it. */
            (void)poll(&p[1], 1, 10);
            continue;
        }
        serve(h, fd);
        shutdown(fd, SHUT_WR);
        close(fd);
    }
}

static int open_listener(cw_metrics_http *h, const char *address, char *why, size_t whylen)
{
    struct sockaddr_storage sa;
    socklen_t salen;
    if (!parse_address(address, &sa, &salen)) {
        snprintf(why, whylen, "metrics_address must be a numeric \"host:port\": %s", address);
        return CW_ERR_INVALID;
    }
    int one = 1;
    h->listen_fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->listen_fd < 0 ||
        setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(h->listen_fd, (struct sockaddr *)&sa, salen) != 0 || listen(h->listen_fd, 16) != 0) {
        snprintf(why, whylen, "metrics endpoint: cannot listen on %s: %s", address,
                 strerror(errno));
        return CW_ERR_BIND_FAILED;
    }
    cw_rt_metrics *rm = cw_metrics_of(h->rt);
    format_address(h->listen_fd, rm->endpoint, sizeof rm->endpoint);
    return CW_OK;
}

int cw_metrics_http_start(cw_metrics_http *h, cw_rt *rt, const char *address, char *why,
                          size_t whylen)
{
    h->rt = rt;
    h->listen_fd = h->stop_fd = -1;
    h->running = false;
    if (!address)
        return CW_OK;
    int rc = open_listener(h, address, why, whylen);
    if (rc == CW_OK) {
        h->stop_fd = eventfd(0, EFD_CLOEXEC);
        if (h->stop_fd < 0 || cw_os.thread_create(&h->thread, NULL, http_thread, h) != 0) {
            snprintf(why, whylen, "metrics endpoint: cannot start its thread");
            rc = CW_ERR_IO;
        }
    }
    if (rc != CW_OK) {
        if (h->listen_fd >= 0)
            close(h->listen_fd);
        if (h->stop_fd >= 0)
            close(h->stop_fd);
        h->listen_fd = h->stop_fd = -1;
        cw_metrics_of(rt)->endpoint[0] = '\0';
        return rc;
    }
    h->running = true;
    return CW_OK;
}

void cw_metrics_http_stop(cw_metrics_http *h)
{
    if (!h->running)
        return;
    uint64_t one = 1;
    while (write(h->stop_fd, &one, sizeof one) != sizeof one)
        if (errno != EINTR) /* a descriptor of ours gone bad */
            cw_fatal("cannot stop the metrics endpoint: errno %d", errno);
    pthread_join(h->thread, NULL);
    close(h->listen_fd);
    close(h->stop_fd);
    h->listen_fd = h->stop_fd = -1;
    h->running = false;
}
