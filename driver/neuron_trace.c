// SPDX-License-Identifier: GPL-2.0-only
/* The tracepoints of neuron_trace.h, defined here once. */
#define CREATE_TRACE_POINTS
#include "neuron_trace.h"
