/*
 * os.c - the real system calls behind cw_os (os.h).
 */
#include "native/os.h"

cw_os_calls cw_os = {
    .thread_create = pthread_create,
};
