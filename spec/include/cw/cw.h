/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/cw.h - the whole interface in one include.
 */
#ifndef CW_CW_H
#define CW_CW_H

#include "cw/backend.h"
#include "cw/channel.h"
#include "cw/clock.h"
#include "cw/context.h"
#include "cw/error.h"
#include "cw/iobuf.h"
#include "cw/metrics.h"
#include "cw/network.h"
#include "cw/panic.h"
#include "cw/ratelimit.h"
#include "cw/bufpool.h"
#include "cw/runner.h"
#include "cw/select.h"
#include "cw/signal.h"
#include "cw/storage.h"
#include "cw/strategy.h"
#include "cw/task.h"
#include "cw/types.h"

#endif
