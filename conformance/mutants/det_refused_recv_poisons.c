/* A recv turned away because another task's recv waits on the stream
 * poisons the stream: every later recv there fails with CW_ERR_CLOSED
 * (NET-035: the refused call changes nothing). */
#define CWM_BASE "deterministic"
#include "mutant.h"

enum { REMEMBERED = 64 };
static cw_stream *poisoned[REMEMBERED];
static size_t npoisoned;

static bool is_poisoned(const cw_stream *s)
{
    for (size_t i = 0; i < npoisoned; i++)
        if (poisoned[i] == s)
            return true;
    return false;
}

static int poisoning_recv(cw_stream *s, size_t len, cw_iobufs **out)
{
    if (is_poisoned(s)) {
        *out = NULL;
        return CW_ERR_CLOSED;
    }
    int rc = cwm_base_network->stream_recv(s, len, out);
    if (rc == CW_ERR_INVALID && npoisoned < REMEMBERED)
        poisoned[npoisoned++] = s;
    return rc;
}

static void mutate(void)
{
    cwm_network.stream_recv = poisoning_recv;
}
