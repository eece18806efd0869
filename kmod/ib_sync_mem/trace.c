// SPDX-License-Identifier: GPL-2.0
/* Instantiates the ib_sync_mem tracepoints declared in trace.h. */
#define CREATE_TRACE_POINTS
#include "trace.h"
