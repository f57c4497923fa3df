/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hardware fences: one per job that reached (or was failed on) a queue,
 * signalled when the job's last descriptor completes.
 */
#ifndef __NEURON_FENCE_H__
#define __NEURON_FENCE_H__

#include <linux/dma-fence.h>
#include <linux/types.h>

struct neuron_job;
struct neuron_queue;

/**
 * struct neuron_fence - hardware fence of a job on a queue
 */
struct neuron_fence {
	struct dma_fence base;
	struct neuron_queue *queue;
	/** @device_error: NISA_ERR_* the device reported, 0 if none */
	u32 device_error;
	/** @done_at: the queue's DONE count once the job has completed */
	u32 done_at;
	/**
	 * @on_demand: the job's descriptors ask for no interrupt; one is
	 * requested through IRQ_AT when somebody waits for the fence
	 */
	bool on_demand;
};

static inline struct neuron_fence *to_neuron_fence(struct dma_fence *f)
{
	return container_of(f, struct neuron_fence, base);
}

int neuron_fence_cache_init(void);
void neuron_fence_cache_fini(void);
struct neuron_fence *neuron_fence_alloc(void);
void neuron_fence_free(struct neuron_fence *f);
void neuron_fence_start_locked(struct neuron_queue *q, struct neuron_fence *f,
			       struct neuron_job *job);
u32 neuron_fence_sync_device_error(struct dma_fence *fence);

#endif /* __NEURON_FENCE_H__ */
