/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hardware queues: descriptor rings, completion interrupts and the
 * drm_sched instance of each queue.
 */
#ifndef __NEURON_QUEUE_H__
#define __NEURON_QUEUE_H__

#include <linux/dma-fence.h>
#include <linux/spinlock.h>
#include <drm/gpu_scheduler.h>

#include "neuron_fence.h"
#include "neuron_hw.h"

struct neuron_device;
struct neuron_error_site;
struct neuron_job;

#define NEURON_RING_ENTRIES	256
/*
 * The ring is shared between the scheduler, which hands jobs over up to its
 * credit limit (one credit per descriptor), and direct submission, which
 * owns the rest: together they never overfill it.
 */
#define NEURON_SCHED_SLOTS	192
#define NEURON_DIRECT_SLOTS	(NEURON_RING_ENTRIES - 1 - NEURON_SCHED_SLOTS)

/**
 * struct neuron_queue - one hardware queue of the card
 */
struct neuron_queue {
	struct neuron_device *ndev;
	/** @idx: queue number on the card (BAR0 block and MSI-X vector) */
	u32 idx;
	/** @engine: enum neuron_engine of the queue */
	u32 engine;
	char name[16];

	struct drm_gpu_scheduler sched;

	/** @ring: descriptor ring in DMA-coherent memory */
	void *ring;
	dma_addr_t ring_dma;
	/**
	 * @tables: core queues: the buffer table of each ring entry
	 * (NHW_MAX_SLOTS slots each), DMA-coherent, so a launch allocates
	 * and maps nothing
	 */
	struct nhw_slot *tables;
	dma_addr_t tables_dma;
	/** @tail: next free ring slot, under @lock */
	u32 tail;
	/** @written: descriptors written since the ring started, under @lock */
	u32 written;
	/** @retired: the device's DONE count at the last job retired */
	u32 retired;
	/** @irq_at: last value written to IRQ_AT, if @irq_armed */
	u32 irq_at;
	bool irq_armed;

	/** @lock: protects @inflight to @stopped; the hardware fences' lock */
	spinlock_t lock;
	/** @inflight: jobs on the ring, oldest first */
	struct list_head inflight;
	/** @direct_slots: ring slots taken by direct submissions */
	u32 direct_slots;
	/** @direct_retired: direct jobs retired, ever (progress) */
	u32 direct_retired;
	/** @watchdog_seen: @direct_retired at the watchdog's last look */
	u32 watchdog_seen;
	/** @stopped: a reset or removal is under way: no direct submission */
	bool stopped;
	/**
	 * @last_err: the error the last job retired from the ring ended
	 * with (0 or a negative errno), and @last_site its device error:
	 * what a job chained behind it (@chained) fails with when skipped
	 */
	int last_err;
	struct neuron_error_site last_site;
	/** @watchdog: times out directly submitted jobs (on the reset queue) */
	struct delayed_work watchdog;
	/**
	 * @peer_gone: link queues: fails the jobs on the ring when the card
	 * at the link's other end is removed (on the reset queue)
	 */
	struct work_struct peer_gone;
	u64 fence_context;
	u64 fence_seqno;

	/** @busy_ns: time with jobs on the ring, under @lock */
	u64 busy_ns;
	/** @busy_since: when the ring last became non-empty */
	ktime_t busy_since;
	/**
	 * @head_since: when the job at the head of the ring got there, that
	 * is, at the latest, when the engine started it: what its engine time
	 * and its timeout count from
	 */
	ktime_t head_since;
};

static inline u32 neuron_qreg(struct neuron_queue *q, u32 reg)
{
	return NHW_QREG_BASE(q->idx) + reg;
}

int neuron_queues_init(struct neuron_device *ndev);
u64 neuron_queue_busy_ns(struct neuron_queue *q);
int neuron_queue_inflight(struct neuron_queue *q);
struct dma_fence *neuron_queue_push(struct neuron_queue *q,
				    struct neuron_job *job, bool direct);
struct dma_fence *neuron_queue_fail(struct neuron_queue *q,
				    struct neuron_job *job, int err,
				    const struct neuron_error_site *site);
void neuron_queues_poll(struct neuron_device *ndev);

/* The ring, for neuron_reset.c and neuron_fence.c: callers hold q->lock. */
void neuron_queue_hw_start(struct neuron_queue *q);
void neuron_queue_write_job_locked(struct neuron_queue *q,
				   struct neuron_job *job);
void neuron_queue_doorbell(struct neuron_queue *q);
void neuron_queue_retire_locked(struct neuron_queue *q,
				struct neuron_job *job, int err);
void neuron_queue_want_irq_locked(struct neuron_queue *q, u32 done_at);
void neuron_queue_rearm_locked(struct neuron_queue *q);
void neuron_queue_complete_locked(struct neuron_queue *q);

#endif /* __NEURON_QUEUE_H__ */
