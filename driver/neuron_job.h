/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Jobs (neuron_job.c), their drm_sched backend (neuron_sched.c) and the
 * SUBMIT and WAIT ioctls (neuron_submit.c).
 */
#ifndef __NEURON_JOB_H__
#define __NEURON_JOB_H__

#include <drm/gpu_scheduler.h>

#include <drm/neuron_accel.h>

#include "neuron_hw.h"

struct drm_device;
struct drm_file;
struct drm_gem_object;
struct neuron_device;
struct neuron_pin;
struct neuron_queue;

/**
 * struct neuron_job - a job: descriptors for one queue and what they use
 *
 * Created by the SUBMIT ioctl, owned by drm_sched once pushed, freed by
 * free_job after its finished fence has signalled (a direct job: by the
 * device's reaper after its hardware fence has). One allocation holds it
 * and its arrays (@descs, @bos, @pins, @in_fences): a slab object of fixed shape
 * (@small), or sized by the submission. Not cleared when allocated:
 * neuron_job_alloc() sets every field.
 */
struct neuron_job {
	struct drm_sched_job base;
	struct neuron_queue *queue;

	/** @bos: buffers the descriptors reference, held until free */
	struct drm_gem_object **bos;
	u32 bo_count;

	/**
	 * @pins: DMA: the host buffer ranges its copies name, pinned and
	 * mapped until the job is freed (room for two per copy)
	 */
	struct neuron_pin *pins;
	u32 npins;
	/** @pinned: bytes of @pins, counted in the device's stats.pinned */
	u64 pinned;
	/**
	 * @budget: bytes of @pins still counted in the file's
	 * stats->pinned: until the job completes, or is freed without
	 * having run (the pages stay pinned until it is freed)
	 */
	u64 budget;

	/** @descs: descriptors, built at submit, copied to the ring by run_job */
	union nhw_desc *descs;
	u32 ndesc;

	/**
	 * @table: compute: the buffer table, @nslots entries, copied next to
	 * the ring entry that uses it when the job is written into the ring
	 */
	struct nhw_slot *table;
	u32 nslots;

	/**
	 * @in_fences: the fences of the job's in-syncs (also its scheduler
	 * dependencies), kept to pass their errors on: a job whose input
	 * failed does not run, it fails with the same error
	 */
	struct dma_fence **in_fences;
	u32 in_fence_count;

	/** @cookie: SUBMIT's, reported with a device error of this job */
	u64 cookie;
	/** @hw_fence: signalled when the last descriptor completes */
	struct dma_fence *hw_fence;
	/**
	 * @after: the one input that had not signalled when SUBMIT found
	 * the job ready: the hardware fence of the job last written to the
	 * same queue's ring (one of @in_fences, so held); NULL if none
	 */
	struct dma_fence *after;
	/**
	 * @chained: on the ring right behind @after's job, each of its
	 * descriptors flagged NHW_DESC_F_AFTER: if that job fails, the
	 * device skips this one and it fails with the same error and site
	 */
	bool chained;
	/** @first_slot: ring slot of the first descriptor, set by run_job */
	u32 first_slot;
	/** @started: when run_job put it on the ring */
	ktime_t started;
	/** @stats: the submitting file's usage counters (a reference) */
	struct neuron_file_stats *stats;
	/** @link: entry in the queue's in-flight list, under queue->lock */
	struct list_head link;
	/**
	 * @direct: put on the ring by SUBMIT itself, not by the scheduler;
	 * freed by the device's reaper once it has completed
	 */
	bool direct;
	/**
	 * @done: completed, counted in its device buffers' @done_jobs
	 * (set at retirement, under the queue's lock)
	 */
	bool done;
	/** @reap: entry in the device's list of completed direct jobs */
	struct llist_node reap;
	/** @small: from the slab cache of small jobs */
	bool small;
	/**
	 * @peer: a link job: the card its copies write into (its peer
	 * buffers, in @bos, keep that card's structure alive)
	 */
	struct neuron_device *peer;
};

/*
 * Seqno of a job's hardware fence (0 before it ran): how resets name a job
 * that may be freed while they look for it.
 */
static inline u64 neuron_job_seqno(struct neuron_job *job)
{
	return job->hw_fence ? job->hw_fence->seqno : 0;
}

static inline struct neuron_job *to_neuron_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct neuron_job, base);
}

/* neuron_job.c */
int neuron_job_cache_init(void);
void neuron_job_cache_fini(void);
struct neuron_job *neuron_job_alloc(struct drm_neuron_submit *args);
int neuron_job_build(struct neuron_job *job, struct drm_file *file,
		     struct drm_neuron_submit *args);
int neuron_job_get_in_syncs(struct neuron_job *job, struct drm_file *file,
			    struct drm_neuron_submit *args);
void neuron_job_free(struct neuron_job *job);
void neuron_job_reap(struct work_struct *work);
void neuron_job_done_locked(struct neuron_job *job);
void neuron_job_unbudget(struct neuron_job *job);

/* neuron_link.c */
int neuron_link_build(struct neuron_job *job, struct drm_file *file,
		      struct drm_neuron_submit *args);
int neuron_link_enter(struct neuron_job *job, int *idx);

/* neuron_sched.c */
extern const struct drm_sched_backend_ops neuron_sched_ops;

/* neuron_submit.c */
int neuron_submit_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int neuron_wait_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);

#endif /* __NEURON_JOB_H__ */
