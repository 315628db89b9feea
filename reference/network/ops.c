/*
 * ops.c - the network entries of the two reference backends: the halves
 * and listeners are shared, the transport and the resolver differ.
 */
#include "network/net.h"

const cw_network_ops cw_network_memory_entries = {
    .size = sizeof(cw_network_ops),
    .bind = cw_mem_bind,
    .local_addr = cw_net_local_addr,
    .wait_accept = cw_net_wait_accept,
    .listener_close = cw_net_listener_close,
    .dial = cw_mem_dial,
    .wait_sink_send = cw_net_sink_wait_send,
    .sink_send = cw_net_sink_send,
    .sink_close = cw_net_sink_close,
    .wait_stream_recv = cw_net_stream_wait_recv,
    .stream_recv = cw_net_stream_recv,
    .stream_peek = cw_net_stream_peek,
    .stream_close = cw_net_stream_close,
    .resolve = cw_mem_resolve,
    .resolver_register = cw_mem_resolver_register,
    .mock_channel = cw_mem_mock_channel,
};

const cw_network_ops cw_network_tcp_entries = {
    .size = sizeof(cw_network_ops),
    .bind = cw_tcp_bind,
    .local_addr = cw_net_local_addr,
    .wait_accept = cw_net_wait_accept,
    .listener_close = cw_net_listener_close,
    .dial = cw_tcp_dial,
    .wait_sink_send = cw_net_sink_wait_send,
    .sink_send = cw_net_sink_send,
    .sink_close = cw_net_sink_close,
    .wait_stream_recv = cw_net_stream_wait_recv,
    .stream_recv = cw_net_stream_recv,
    .stream_peek = cw_net_stream_peek,
    .stream_close = cw_net_stream_close,
    .resolve = cw_sys_resolve,
    .resolver_register = cw_sys_resolver_register,
    .mock_channel = cw_mem_mock_channel,
};
