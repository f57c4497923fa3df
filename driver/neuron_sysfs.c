// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs attributes of the card (on its PCI device, so under
 * /sys/class/accel/accelN/device/): memory use, engine busy time, host
 * memory pinned by jobs, and the buffer, job, error and reset counters.
 * neuron-top reads these.
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "neuron_drv.h"

static struct neuron_device *neuron_from_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t mem_total_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%llu\n", neuron_from_dev(dev)->mem_size);
}
static DEVICE_ATTR_RO(mem_total);

static ssize_t mem_used_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct neuron_device *ndev = neuron_from_dev(dev);
	u64 used;

	mutex_lock(&ndev->mm_lock);
	used = ndev->mem_used;
	mutex_unlock(&ndev->mm_lock);
	return sysfs_emit(buf, "%llu\n", used);
}
static DEVICE_ATTR_RO(mem_used);

/* Busy time of every queue of one engine class, space-separated, in ns. */
static ssize_t neuron_busy_show(struct device *dev, char *buf, bool core)
{
	struct neuron_device *ndev = neuron_from_dev(dev);
	int len = 0;
	u32 i;

	for (i = 0; i < ndev->num_queues; i++) {
		if (ndev->queues[i].is_core != core)
			continue;
		len += sysfs_emit_at(buf, len, "%s%llu", len ? " " : "",
				     neuron_queue_busy_ns(&ndev->queues[i]));
	}
	return len + sysfs_emit_at(buf, len, "\n");
}

static ssize_t dma_busy_ns_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return neuron_busy_show(dev, buf, false);
}
static DEVICE_ATTR_RO(dma_busy_ns);

static ssize_t core_busy_ns_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	return neuron_busy_show(dev, buf, true);
}
static DEVICE_ATTR_RO(core_busy_ns);

static ssize_t neuron_counter_show(char *buf, atomic64_t *counter)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(counter));
}

static ssize_t bos_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.bos);
}
static DEVICE_ATTR_RO(bos);

static ssize_t pinned_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.pinned);
}
static DEVICE_ATTR_RO(pinned);

static ssize_t jobs_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.jobs);
}
static DEVICE_ATTR_RO(jobs);

static ssize_t submitted_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.submitted);
}
static DEVICE_ATTR_RO(submitted);

static ssize_t completed_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.completed);
}
static DEVICE_ATTR_RO(completed);

static ssize_t errors_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.errors);
}
static DEVICE_ATTR_RO(errors);

static ssize_t queue_resets_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.queue_resets);
}
static DEVICE_ATTR_RO(queue_resets);

static ssize_t device_resets_show(struct device *dev, struct device_attribute *attr,
				  char *buf)
{
	return neuron_counter_show(buf, &neuron_from_dev(dev)->stats.device_resets);
}
static DEVICE_ATTR_RO(device_resets);

static struct attribute *neuron_attrs[] = {
	&dev_attr_mem_total.attr,
	&dev_attr_mem_used.attr,
	&dev_attr_dma_busy_ns.attr,
	&dev_attr_core_busy_ns.attr,
	&dev_attr_bos.attr,
	&dev_attr_pinned.attr,
	&dev_attr_jobs.attr,
	&dev_attr_submitted.attr,
	&dev_attr_completed.attr,
	&dev_attr_errors.attr,
	&dev_attr_queue_resets.attr,
	&dev_attr_device_resets.attr,
	NULL
};

static const struct attribute_group neuron_attr_group = {
	.name = "neuron",
	.attrs = neuron_attrs,
};

const struct attribute_group *neuron_dev_groups[] = {
	&neuron_attr_group,
	NULL
};
