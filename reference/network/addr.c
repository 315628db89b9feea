/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * addr.c - between cw_addr and the socket interface's addresses.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "network/net.h"

socklen_t cw_addr_to_sockaddr(const cw_addr *a, struct sockaddr_storage *out)
{
    memset(out, 0, sizeof *out);
    if (a->family == CW_ADDR_IPV4) {
        struct sockaddr_in *in = (struct sockaddr_in *)out;
        in->sin_family = AF_INET;
        in->sin_port = htons(a->port);
        memcpy(&in->sin_addr, a->ip, 4);
        return sizeof *in;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(a->port);
    memcpy(&in6->sin6_addr, a->ip, 16);
    return sizeof *in6;
}

void cw_addr_from_sockaddr(const struct sockaddr *sa, cw_addr *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        out->family = CW_ADDR_IPV4;
        out->port = ntohs(in->sin_port);
        memcpy(out->ip, &in->sin_addr, 4);
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        out->family = CW_ADDR_IPV6;
        out->port = ntohs(in6->sin6_port);
        memcpy(out->ip, &in6->sin6_addr, 16);
    }
}

bool cw_addr_is_loopback(const cw_addr *a)
{
    cw_addr v4 = cw_addr_loopback4(a->port), v6 = cw_addr_loopback6(a->port);
    return cw_addr_equal(a, &v4) || cw_addr_equal(a, &v6);
}
