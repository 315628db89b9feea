/* A sync that failed is reported once: the next sync of the same open
 * returns CW_OK, though the writes the failed one covered may be lost
 * (STOR-037). */
#define CWM_BASE "deterministic"
#include "mutant.h"

enum { REMEMBERED = 64 };
static const cw_blob *failed[REMEMBERED];
static size_t nfailed;

static bool failed_before(const cw_blob *b)
{
    for (size_t i = 0; i < nfailed; i++)
        if (failed[i] == b)
            return true;
    return false;
}

static int forgetful_sync(cw_blob *b, cw_storage_error *err)
{
    int rc = cwm_base_storage->blob_sync(b, err);
    if (rc != CW_ERR_BLOB_SYNC_FAILED)
        return rc;
    if (failed_before(b))
        return CW_OK;
    if (nfailed < REMEMBERED)
        failed[nfailed++] = b;
    return rc;
}

static void mutate(void)
{
    cwm_storage.blob_sync = forgetful_sync;
}
