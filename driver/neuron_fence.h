/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hardware fences: one per job that reached (or was failed on) a queue,
 * signalled when the job's last descriptor completes.
 */
#ifndef __NEURON_FENCE_H__
#define __NEURON_FENCE_H__

#include <linux/dma-fence.h>
#include <linux/types.h>
#include <drm/neuron_accel.h>

struct neuron_job;
struct neuron_queue;

/**
 * struct neuron_error_site - where the device reported a job's error
 */
struct neuron_error_site {
	/** @code: NISA_ERR_* the device reported, 0 if none */
	u32 code;
	/**
	 * @insn: index of the failing instruction in the kernel of the job
	 * where it happened, DRM_NEURON_NO_INSN if the device named none
	 */
	u32 insn;
	/** @cookie: that job's SUBMIT cookie (it may be an input's job) */
	u64 cookie;
};

#define NEURON_NO_ERROR_SITE \
	((struct neuron_error_site){ .insn = DRM_NEURON_NO_INSN })

/**
 * struct neuron_fence - hardware fence of a job on a queue
 */
struct neuron_fence {
	struct dma_fence base;
	struct neuron_queue *queue;
	/** @site: the device's error and where it happened; code 0 if none */
	struct neuron_error_site site;
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
struct neuron_error_site neuron_fence_sync_site(struct dma_fence *fence);
bool neuron_fence_on_queue(struct dma_fence *fence, struct neuron_queue *q);

#endif /* __NEURON_FENCE_H__ */
