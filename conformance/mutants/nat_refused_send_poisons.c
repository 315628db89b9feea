/* A send turned away because another task's send waits on the sink
 * poisons the sink: every later send there fails with CW_ERR_CLOSED
 * (NET-035: the refused call changes nothing). */
#define CWM_BASE "native"
#include "mutant.h"

enum { REMEMBERED = 64 };
static cw_sink *poisoned[REMEMBERED];
static size_t npoisoned;

static bool is_poisoned(const cw_sink *s)
{
    for (size_t i = 0; i < npoisoned; i++)
        if (poisoned[i] == s)
            return true;
    return false;
}

static int poisoning_send(cw_sink *s, const cw_iobufs *bufs)
{
    if (is_poisoned(s))
        return CW_ERR_CLOSED;
    int rc = cwm_base_network->sink_send(s, bufs);
    if (rc == CW_ERR_INVALID && npoisoned < REMEMBERED)
        poisoned[npoisoned++] = s;
    return rc;
}

static void mutate(void)
{
    cwm_network.sink_send = poisoning_send;
}
