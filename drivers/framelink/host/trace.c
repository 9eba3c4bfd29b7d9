// SPDX-License-Identifier: GPL-2.0
/* framelink-host: the tracepoints' definitions (trace.h) */
#define CREATE_TRACE_POINTS
#include "trace.h"
