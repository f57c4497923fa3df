/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Recovery of hung queues (queue and device resets), the watchdog of
 * directly submitted jobs, and quiescing the queues on removal.
 */
#ifndef __NEURON_RESET_H__
#define __NEURON_RESET_H__

#include <linux/types.h>

struct neuron_device;
struct neuron_queue;
struct work_struct;

/* Module parameter job_timeout_ms: what the scheduler and watchdog allow. */
extern unsigned int neuron_job_timeout_ms;

void neuron_queue_reset(struct neuron_queue *q, u64 guilty);
void neuron_queue_watchdog(struct work_struct *work);
void neuron_queue_peer_gone(struct work_struct *work);
void neuron_queue_watchdog_arm(struct neuron_queue *q);
void neuron_queues_stop(struct neuron_device *ndev);

#endif /* __NEURON_RESET_H__ */
