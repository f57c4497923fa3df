// SPDX-License-Identifier: MIT
/*
 * Where a stream's work runs: the NeuronCore that executes its compute jobs
 * and the DMA queue that executes its copies, fixed when the stream is
 * created (round robin over the card's queues, stream.c). Profilers use it
 * to put a stream's work on the lane of the engine that ran it.
 */
#include <errno.h>

#include "internal.h"

NRN_EXPORT int nrn_stream_queues(const struct nrn_stream *s,
				 unsigned int *core, unsigned int *dma)
{
	if (!s || !core || !dma)
		return -EINVAL;
	*core = s->core;
	*dma = s->dma;
	return 0;
}
