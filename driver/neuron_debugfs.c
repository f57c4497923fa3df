// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs (/sys/kernel/debug/accel/<minor>/): the queues as the hardware
 * and the driver see them, the counters, and test hooks that drive the
 * card's fault injection (docs/hardware.md) for the recovery tests.
 */
#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/seq_file.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "neuron_drv.h"

static int neuron_queues_show(struct seq_file *m, void *unused)
{
	struct neuron_device *ndev = m->private;
	int idx;
	u32 i;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	seq_puts(m, "queue   head tail  sw-tail status error done       inflight busy-ns\n");
	for (i = 0; i < ndev->num_queues; i++) {
		struct neuron_queue *q = &ndev->queues[i];
		u32 base = NHW_QREG_BASE(i);

		seq_printf(m, "%-7s %4u %4u %8u 0x%04x %5u %-10u %8d %llu\n", q->name,
			   neuron_rd(ndev, base + NHW_QREG_HEAD),
			   neuron_rd(ndev, base + NHW_QREG_TAIL), q->tail,
			   neuron_rd(ndev, base + NHW_QREG_STATUS),
			   neuron_rd(ndev, base + NHW_QREG_ERROR),
			   neuron_rd(ndev, base + NHW_QREG_DONE_LO),
			   neuron_queue_inflight(q), neuron_queue_busy_ns(q));
	}
	drm_dev_exit(idx);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(neuron_queues);

static int neuron_counters_show(struct seq_file *m, void *unused)
{
	struct neuron_device *ndev = m->private;
	struct neuron_counters *st = &ndev->stats;

	seq_printf(m, "bos %lld\npinned %lld\njobs %lld\nsubmitted %lld\n"
		   "completed %lld\nerrors %lld\nqueue_resets %lld\n"
		   "device_resets %lld\n",
		   atomic64_read(&st->bos), atomic64_read(&st->pinned),
		   atomic64_read(&st->jobs),
		   atomic64_read(&st->submitted), atomic64_read(&st->completed),
		   atomic64_read(&st->errors), atomic64_read(&st->queue_resets),
		   atomic64_read(&st->device_resets));
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(neuron_counters);

/*
 * Writing "<queue> <bits>" sets the queue's FAULT register (NHW_FAULT_HANG
 * = 1, NHW_FAULT_FAIL_NEXT = 2, NHW_FAULT_STUCK = 4); "<queue> 0" clears it.
 */
static ssize_t neuron_fault_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct neuron_device *ndev = file->private_data;
	char buf[32];
	u32 q, bits;
	int idx;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%u %u", &q, &bits) != 2 || q >= ndev->num_queues ||
	    bits & ~(NHW_FAULT_HANG | NHW_FAULT_FAIL_NEXT | NHW_FAULT_STUCK))
		return -EINVAL;
	if (!(ndev->caps & NHW_CAP_FAULT_INJECT))
		return -EOPNOTSUPP;
	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	neuron_wr(ndev, NHW_QREG_BASE(q) + NHW_QREG_FAULT, bits);
	drm_dev_exit(idx);
	return count;
}

static const struct file_operations neuron_fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = neuron_fault_write,
	.llseek = noop_llseek,
};

/**
 * neuron_debugfs_init() - add the card's files to its DRM debugfs directory
 * @ndev: device, registered
 *
 * The files go with the directory when the DRM device is released.
 */
void neuron_debugfs_init(struct neuron_device *ndev)
{
	struct dentry *root = ndev->drm.debugfs_root;

	debugfs_create_file("queues", 0444, root, ndev, &neuron_queues_fops);
	debugfs_create_file("counters", 0444, root, ndev, &neuron_counters_fops);
	debugfs_create_file("fault_inject", 0200, root, ndev, &neuron_fault_fops);
}
