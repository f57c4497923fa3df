/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * neuron.ko: DRM accel driver for the virtual Trainium card.
 */
#ifndef __NEURON_DRV_H__
#define __NEURON_DRV_H__

#include <linux/io.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/workqueue.h>
#include <linux/pci.h>
#include <linux/wait.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "neuron_hw.h"
#include "neuron_queue.h"

#define DRIVER_NAME	"neuron"
#define DRIVER_DESC	"Virtual Trainium accelerator"

#define neuron_err(ndev, fmt, ...) \
	drm_err(&(ndev)->drm, "%s(): " fmt, __func__, ##__VA_ARGS__)
#define neuron_warn(ndev, fmt, ...) \
	drm_warn(&(ndev)->drm, "%s(): " fmt, __func__, ##__VA_ARGS__)
#define neuron_dbg(ndev, fmt, ...) \
	drm_dbg_driver(&(ndev)->drm, fmt, ##__VA_ARGS__)

/**
 * struct neuron_counters - lifetime counters of a card (sysfs)
 */
struct neuron_counters {
	/** @bos: buffer objects alive */
	atomic64_t bos;
	/** @jobs: jobs alive (submitted and not yet freed) */
	atomic64_t jobs;
	atomic64_t submitted;
	atomic64_t completed;
	/** @errors: jobs that ended with an error */
	atomic64_t errors;
	atomic64_t queue_resets;
	atomic64_t device_resets;
	/** @pinned: bytes of host memory pinned by jobs alive and pinned buffers */
	atomic64_t pinned;
};

/* Engine classes, as fdinfo names them (drm-engine-<name>). */
enum neuron_engine {
	NEURON_ENGINE_DMA,
	NEURON_ENGINE_CORE,
	NEURON_ENGINE_LINK,
	NEURON_ENGINES
};

/**
 * struct neuron_file_stats - usage of one open file, for its fdinfo
 *
 * Shared by the file and its jobs (a job may outlive the file that
 * submitted it), hence the reference count.
 */
struct neuron_file_stats {
	struct kref ref;
	/** @busy_ns: time jobs of this file spent on each engine class */
	atomic64_t busy_ns[NEURON_ENGINES];
	/**
	 * @queued: per hardware queue, jobs of this file handed to the
	 * scheduler and not yet on the ring; direct submission waits for
	 * zero, so a context's jobs keep their order
	 */
	atomic_t queued[NHW_MAX_QUEUES];
	/**
	 * @pinned: bytes of host memory this file's jobs in flight have
	 * pinned, and the size of the pinned buffers it created (until they
	 * are freed), at most neuron_max_pinned()
	 */
	atomic64_t pinned;
};

void neuron_file_stats_put(struct neuron_file_stats *stats);

/**
 * struct neuron_device - one card
 */
struct neuron_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	/** @mem_base: bus address of device memory (BAR2) */
	resource_size_t mem_base;
	/** @mem_size: bytes of device memory */
	u64 mem_size;

	u32 model_version;
	u32 caps;
	u32 num_dma;
	u32 num_cores;
	/** @num_links: card-to-card links (link queues follow the cores') */
	u32 num_links;
	u32 num_queues;
	/** @fabric: NHW_REG_FABRIC at probe: id, size and rank, 0 if in none */
	u32 fabric;
	/** @link_peer: fabric rank at the other end of each link */
	u8 link_peer[NHW_MAX_LINKS];
	/** @card: entry in the list of cards (neuron_link.c), for peer removal */
	struct list_head card;

	/** @mm_lock: protects @mm and @mem_used */
	struct mutex mm_lock;
	struct drm_mm mm;
	u64 mem_used;

	struct neuron_counters stats;
	/** @jobs_wq: woken when the last job alive (stats.jobs) is freed */
	wait_queue_head_t jobs_wq;
	/** @reset_wq: ordered workqueue of all queues' timeout handlers */
	struct workqueue_struct *reset_wq;
	/** @reap_list: direct jobs that completed, to be freed */
	struct llist_head reap_list;
	/** @reap_work: frees them in process context, in batches */
	struct delayed_work reap_work;

	struct neuron_queue queues[NHW_MAX_QUEUES];
};

/**
 * struct neuron_file_priv - one open file: a context
 */
struct neuron_file_priv {
	struct neuron_device *ndev;
	/** @submit_lock: keeps arm + push of this context's jobs in order */
	struct mutex submit_lock;
	struct neuron_file_stats *stats;
	/** @entities: one scheduler entity per hardware queue */
	struct drm_sched_entity entities[NHW_MAX_QUEUES];
};

static inline struct neuron_device *to_neuron_device(struct drm_device *drm)
{
	return container_of(drm, struct neuron_device, drm);
}

static inline u32 neuron_rd(struct neuron_device *ndev, u32 reg)
{
	return readl(ndev->regs + reg);
}

static inline void neuron_wr(struct neuron_device *ndev, u32 reg, u32 val)
{
	writel(val, ndev->regs + reg);
}

/* The hardware queue of link @l. */
static inline struct neuron_queue *neuron_link_queue(struct neuron_device *ndev,
						     u32 l)
{
	return &ndev->queues[ndev->num_dma + ndev->num_cores + l];
}

/* neuron_link.c */
int neuron_link_probe(struct neuron_device *ndev);
u32 neuron_links_up(struct neuron_device *ndev);
void neuron_link_register(struct neuron_device *ndev);
void neuron_link_unregister(struct neuron_device *ndev);

/* neuron_debugfs.c, neuron_sysfs.c, neuron_fdinfo.c */
void neuron_debugfs_init(struct neuron_device *ndev);
extern const struct attribute_group *neuron_dev_groups[];
void neuron_show_fdinfo(struct drm_printer *p, struct drm_file *file);

#endif /* __NEURON_DRV_H__ */
