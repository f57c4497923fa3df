// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs attributes of the card (on its PCI device, so under
 * /sys/class/accel/accelN/device/): memory use, engine busy time, host
 * memory pinned by jobs and pinned buffers, the card's links and fabric,
 * and the buffer, job, error and reset counters.
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
static ssize_t neuron_busy_show(struct device *dev, char *buf, u32 engine)
{
	struct neuron_device *ndev = neuron_from_dev(dev);
	int len = 0;
	u32 i;

	for (i = 0; i < ndev->num_queues; i++) {
		if (ndev->queues[i].engine != engine)
			continue;
		len += sysfs_emit_at(buf, len, "%s%llu", len ? " " : "",
				     neuron_queue_busy_ns(&ndev->queues[i]));
	}
	return len + sysfs_emit_at(buf, len, "\n");
}

static ssize_t dma_busy_ns_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return neuron_busy_show(dev, buf, NEURON_ENGINE_DMA);
}
static DEVICE_ATTR_RO(dma_busy_ns);

static ssize_t core_busy_ns_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	return neuron_busy_show(dev, buf, NEURON_ENGINE_CORE);
}
static DEVICE_ATTR_RO(core_busy_ns);

static ssize_t link_busy_ns_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	return neuron_busy_show(dev, buf, NEURON_ENGINE_LINK);
}
static DEVICE_ATTR_RO(link_busy_ns);

/*
 * The card's links, space-separated: for each, the fabric rank of the card
 * at its other end and whether that card is there ("1:up 3:down"); an
 * empty line when the card has none.
 */
static ssize_t links_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct neuron_device *ndev = neuron_from_dev(dev);
	u32 up = neuron_links_up(ndev), l;
	int len = 0;

	for (l = 0; l < ndev->num_links; l++)
		len += sysfs_emit_at(buf, len, "%s%u:%s", len ? " " : "",
				     ndev->link_peer[l], up & BIT(l) ? "up" : "down");
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(links);

/* The card's fabric: "<id> <size> <rank>", or "0 0 0" when in none. */
static ssize_t fabric_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	u32 f = neuron_from_dev(dev)->fabric;

	return sysfs_emit(buf, "%u %u %u\n", NHW_FABRIC_ID(f), NHW_FABRIC_SIZE(f),
			  NHW_FABRIC_RANK(f));
}
static DEVICE_ATTR_RO(fabric);

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
	&dev_attr_link_busy_ns.attr,
	&dev_attr_links.attr,
	&dev_attr_fabric.attr,
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
