/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * run.c - the network of one run: its lists of objects, its metrics, and
 * what every half and listener shares (audit records, bounded waits).
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "network/net.h"

/* false when memory is exhausted; those made stay registered until the
 * run ends, and a later open finds them. */
static bool register_metrics(cw_net *net)
{
    cw_rt *rt = net->rt;
    net->inbound =
        cw_rt_metric(rt, "runtime_inbound_connections",
                     "Number of connections created by dialing us", CW_METRIC_COUNTER, NULL, 0);
    net->outbound =
        cw_rt_metric(rt, "runtime_outbound_connections",
                     "Number of connections created by dialing others", CW_METRIC_COUNTER, NULL, 0);
    net->inbound_bytes =
        cw_rt_metric(rt, "runtime_inbound_bandwidth",
                     "Bandwidth used by receiving data from others", CW_METRIC_COUNTER, NULL, 0);
    net->outbound_bytes =
        cw_rt_metric(rt, "runtime_outbound_bandwidth", "Bandwidth used by sending data to others",
                     CW_METRIC_COUNTER, NULL, 0);
    return net->inbound && net->outbound && net->inbound_bytes && net->outbound_bytes;
}

/* After the run's last task (or when the native backend's workers are
 * gone): close every listener, connection and socket left. */
static void net_close(cw_rt *rt, void *state)
{
    (void)rt;
    cw_net *net = state;
    /* Listeners first: they free the halves of connections never accepted. */
    for (cw_list *it = net->listeners.next, *next; it != &net->listeners; it = next) {
        next = it->next;
        cw_listener_free(cw_container_of(it, cw_listener, link));
    }
    for (cw_list *it = net->sinks.next, *next; it != &net->sinks; it = next) {
        next = it->next;
        cw_sink_free(cw_container_of(it, cw_sink, link));
    }
    for (cw_list *it = net->streams.next, *next; it != &net->streams; it = next) {
        next = it->next;
        cw_stream_free(cw_container_of(it, cw_stream, link));
    }
    if (net->driver->close)
        net->driver->close(net);
    free(net); /* its metrics belong to the run's registry, which frees them */
}

cw_net *cw_net_of(cw_rt *rt)
{
    return cw_ext_state(rt, CW_EXT_NETWORK);
}

cw_net *cw_net_open(cw_rt *rt)
{
    cw_net *net = cw_ext_state(rt, CW_EXT_NETWORK);
    if (net)
        return net;
    net = calloc(1, sizeof *net);
    if (!net)
        return NULL;
    net->rt = rt;
    net->driver = cw_ext_driver(rt, CW_EXT_NETWORK);
    cw_list_init(&net->listeners);
    cw_list_init(&net->sinks);
    cw_list_init(&net->streams);
    if (!register_metrics(net) || (net->driver->open && !net->driver->open(net))) {
        free(net);
        return NULL;
    }
    cw_ext_attach(rt, CW_EXT_NETWORK, net, net_close);
    return net;
}

bool cw_halves_new(cw_rt *rt, const cw_backend *b, const cw_addr *remote, cw_sink **sink,
                   cw_stream **stream)
{
    *sink = cw_sink_new(rt, b, remote);
    *stream = *sink ? cw_stream_new(rt, b, remote) : NULL;
    if (*stream)
        return true;
    if (*sink)
        cw_sink_free(*sink);
    *sink = NULL;
    return false;
}

void cw_net_audit_result(cw_rt *rt, const char *label, const cw_addr *a, int rc)
{
    if (!cw_audited(rt))
        return;
    char text[CW_ADDR_TEXT_MAX];
    uint8_t code[4];
    uint32_t v = (uint32_t)rc;
    for (int i = 3; i >= 0; i--, v >>= 8)
        code[i] = (uint8_t)v;
    cw_addr_format(a, text);
    cw_field f[2] = {{text, strlen(text)}, {code, 4}};
    cw_audit(rt, label, f, 2);
}

void cw_net_wait_init(cw_wait *w, cw_rt *rt, const cw_backend *b, const cw_wait_ops *ops,
                      void *object)
{
    cw_wait_init(w, b, ops, object);
    cw_waitv_of(w)->rt = rt;
}

int cw_net_wait_bounded(cw_rt *rt, cw_wait *w, cw_duration timeout)
{
    if (timeout == CW_FOREVER)
        return cw_core_select(w, 1, true) < 0 ? CW_ERR_CLOSED : w->result;
    /* Most operations complete without waiting: only arm a timer for one
     * that has to. */
    if (cw_core_select(w, 1, false) == 0)
        return w->result;
    cw_time now = cw_rt_now(rt);
    cw_time deadline = now + timeout < now ? CW_TIME_MAX : now + timeout;
    cw_wait waits[2] = {*w};
    cw_wait_sleep_at(&waits[1], rt, w->backend, deadline);
    int i = cw_core_select(waits, 2, true);
    *w = waits[0];
    if (i < 0)
        return i;
    /* A timer that found no memory ends the sleep at once, with NOMEM:
     * that is no timeout (CLK-008). */
    if (i == 1 && waits[1].result == CW_ERR_NOMEM)
        return CW_ERR_NOMEM;
    return i == 0 ? waits[0].result : CW_ERR_TIMEOUT;
}
