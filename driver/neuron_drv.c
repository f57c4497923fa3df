// SPDX-License-Identifier: GPL-2.0-only
/*
 * neuron.ko: DRM accel driver for the virtual Trainium card. Probe, the DRM
 * driver and its ioctl table, contexts, and device parameters.
 */
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_fence.h"
#include "neuron_gem.h"
#include "neuron_job.h"
#include "neuron_reset.h"

static int neuron_get_param_ioctl(struct drm_device *drm, void *data,
				  struct drm_file *file)
{
	struct neuron_device *ndev = to_neuron_device(drm);
	struct drm_neuron_get_param *args = data;
	u32 i;

	if (args->pad)
		return -EINVAL;
	switch (args->param) {
	case DRM_NEURON_PARAM_DEVICE_ID:
		args->value = ndev->pdev->device;
		break;
	case DRM_NEURON_PARAM_REVISION:
		args->value = ndev->pdev->revision;
		break;
	case DRM_NEURON_PARAM_MODEL_VERSION:
		args->value = ndev->model_version;
		break;
	case DRM_NEURON_PARAM_CAPABILITIES:
		args->value = DRM_NEURON_CAP_DMA | DRM_NEURON_CAP_HOST_BO |
			      DRM_NEURON_CAP_PINNED_BO;
		if (ndev->caps & NHW_CAP_COMPUTE)
			args->value |= DRM_NEURON_CAP_COMPUTE;
		if (ndev->caps & NHW_CAP_BF16)
			args->value |= DRM_NEURON_CAP_BF16;
		if (ndev->num_links)
			args->value |= DRM_NEURON_CAP_LINK;
		break;
	case DRM_NEURON_PARAM_NUM_CORES:
		args->value = ndev->num_cores;
		break;
	case DRM_NEURON_PARAM_NUM_DMA_QUEUES:
		args->value = ndev->num_dma;
		break;
	case DRM_NEURON_PARAM_MEM_SIZE:
		args->value = ndev->mem_size;
		break;
	case DRM_NEURON_PARAM_MEM_FREE:
		mutex_lock(&ndev->mm_lock);
		args->value = ndev->mem_size - ndev->mem_used;
		mutex_unlock(&ndev->mm_lock);
		break;
	case DRM_NEURON_PARAM_ISA_VERSION:
		args->value = neuron_rd(ndev, NHW_REG_ISA_VERSION);
		break;
	case DRM_NEURON_PARAM_MAX_HOST_BO:
		args->value = neuron_max_host_bo();
		break;
	case DRM_NEURON_PARAM_MAX_PINNED:
		args->value = neuron_max_pinned();
		break;
	case DRM_NEURON_PARAM_NUM_LINKS:
		args->value = ndev->num_links;
		break;
	case DRM_NEURON_PARAM_FABRIC:
		args->value = ndev->fabric;
		break;
	case DRM_NEURON_PARAM_LINK_PEERS:
		args->value = 0;
		for (i = 0; i < ndev->num_links; i++)
			args->value |= (u64)ndev->link_peer[i] << (8 * i);
		break;
	case DRM_NEURON_PARAM_LINKS_UP:
		args->value = neuron_links_up(ndev);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static void neuron_file_stats_release(struct kref *ref)
{
	kfree(container_of(ref, struct neuron_file_stats, ref));
}

void neuron_file_stats_put(struct neuron_file_stats *stats)
{
	kref_put(&stats->ref, neuron_file_stats_release);
}

static int neuron_open(struct drm_device *drm, struct drm_file *file)
{
	struct neuron_device *ndev = to_neuron_device(drm);
	struct neuron_file_priv *fpriv;
	struct drm_gpu_scheduler *sched;
	u32 i;
	int ret;

	fpriv = kzalloc(sizeof(*fpriv), GFP_KERNEL);
	if (!fpriv)
		return -ENOMEM;
	fpriv->ndev = ndev;
	fpriv->stats = kzalloc(sizeof(*fpriv->stats), GFP_KERNEL);
	if (!fpriv->stats) {
		kfree(fpriv);
		return -ENOMEM;
	}
	kref_init(&fpriv->stats->ref);
	mutex_init(&fpriv->submit_lock);
	for (i = 0; i < ndev->num_queues; i++) {
		sched = &ndev->queues[i].sched;
		ret = drm_sched_entity_init(&fpriv->entities[i],
					    DRM_SCHED_PRIORITY_NORMAL, &sched, 1,
					    NULL);
		if (ret)
			goto err_entities;
	}
	file->driver_priv = fpriv;
	return 0;

err_entities:
	while (i--)
		drm_sched_entity_destroy(&fpriv->entities[i]);
	mutex_destroy(&fpriv->submit_lock);
	neuron_file_stats_put(fpriv->stats);
	kfree(fpriv);
	return ret;
}

static void neuron_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct neuron_device *ndev = to_neuron_device(drm);
	struct neuron_file_priv *fpriv = file->driver_priv;
	u32 i;

	/* Waits (bounded) for this context's queued jobs, then drops them. */
	for (i = 0; i < ndev->num_queues; i++)
		drm_sched_entity_destroy(&fpriv->entities[i]);
	mutex_destroy(&fpriv->submit_lock);
	neuron_file_stats_put(fpriv->stats);
	kfree(fpriv);
}

static const struct drm_ioctl_desc neuron_ioctls[] = {
	DRM_IOCTL_DEF_DRV(NEURON_GET_PARAM, neuron_get_param_ioctl, 0),
	DRM_IOCTL_DEF_DRV(NEURON_BO_CREATE, neuron_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(NEURON_BO_INFO, neuron_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(NEURON_SUBMIT, neuron_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(NEURON_WAIT, neuron_wait_ioctl, 0),
};

static const struct file_operations neuron_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver neuron_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = neuron_open,
	.postclose = neuron_postclose,
	.gem_create_object = neuron_gem_create_object,
	.gem_prime_import = neuron_gem_prime_import,
	.show_fdinfo = neuron_show_fdinfo,
	.ioctls = neuron_ioctls,
	.num_ioctls = ARRAY_SIZE(neuron_ioctls),
	.fops = &neuron_fops,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	.major = 0,
	.minor = 2,	/* 0.2: SUBMIT cookie, WAIT error_insn and error_cookie */
};

/* Read the card's identity and geometry; refuse what we do not know. */
static int neuron_hw_identify(struct neuron_device *ndev)
{
	u32 id = neuron_rd(ndev, NHW_REG_ID), queues;
	int ret;

	if (id != NHW_ID_MAGIC) {
		neuron_err(ndev, "unexpected ID register 0x%08x\n", id);
		return -ENODEV;
	}
	ndev->model_version = neuron_rd(ndev, NHW_REG_VERSION);
	if (NHW_VERSION_MAJOR(ndev->model_version) != 1) {
		neuron_err(ndev, "unsupported model version %u.%u\n",
			   NHW_VERSION_MAJOR(ndev->model_version),
			   NHW_VERSION_MINOR(ndev->model_version));
		return -ENODEV;
	}
	ndev->caps = neuron_rd(ndev, NHW_REG_CAPS);
	queues = neuron_rd(ndev, NHW_REG_QUEUES);
	ndev->num_dma = NHW_QUEUES_DMA(queues);
	ndev->num_cores = NHW_QUEUES_CORES(queues);
	ndev->num_links = ndev->caps & NHW_CAP_LINK ? NHW_QUEUES_LINKS(queues) : 0;
	ndev->num_queues = ndev->num_dma + ndev->num_cores + ndev->num_links;
	if (!ndev->num_dma || ndev->num_queues > NHW_MAX_QUEUES ||
	    ndev->num_links > NHW_MAX_LINKS) {
		neuron_err(ndev, "bad queue counts: %u DMA, %u cores, %u links\n",
			   ndev->num_dma, ndev->num_cores, ndev->num_links);
		return -ENODEV;
	}
	ret = neuron_link_probe(ndev);
	if (ret)
		return ret;
	ndev->mem_size = neuron_rd(ndev, NHW_REG_MEM_SIZE_LO) |
			 (u64)neuron_rd(ndev, NHW_REG_MEM_SIZE_HI) << 32;
	if (ndev->mem_size > pci_resource_len(ndev->pdev, NHW_BAR_MEM)) {
		neuron_err(ndev, "device memory (%llu) larger than BAR%d\n",
			   ndev->mem_size, NHW_BAR_MEM);
		return -ENODEV;
	}
	return 0;
}

static int neuron_pci_init(struct neuron_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int ret, nvec;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	/* The device's scatter-gather entries take any length. */
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);
	ndev->regs = pcim_iomap_region(pdev, NHW_BAR_REGS, DRIVER_NAME);
	if (IS_ERR(ndev->regs))
		return PTR_ERR(ndev->regs);
	ret = pcim_request_region(pdev, NHW_BAR_MEM, DRIVER_NAME);
	if (ret)
		return ret;
	ndev->mem_base = pci_resource_start(pdev, NHW_BAR_MEM);

	ret = neuron_hw_identify(ndev);
	if (ret)
		return ret;
	/* Start from a clean card, whatever a previous driver left. */
	neuron_wr(ndev, NHW_REG_CTRL, NHW_CTRL_RESET);

	nvec = ndev->num_queues + 1;
	ret = pci_alloc_irq_vectors(pdev, nvec, nvec, PCI_IRQ_MSIX);
	if (ret < 0) {
		neuron_err(ndev, "cannot allocate %d MSI-X vectors: %d\n", nvec, ret);
		return ret;
	}
	return 0;
}

static void neuron_mm_fini(struct drm_device *drm, void *arg)
{
	struct neuron_device *ndev = arg;

	drm_mm_takedown(&ndev->mm);
}

static int neuron_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct neuron_device *ndev;
	int ret;

	ndev = devm_drm_dev_alloc(&pdev->dev, &neuron_drm_driver,
				  struct neuron_device, drm);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	ndev->pdev = pdev;
	pci_set_drvdata(pdev, ndev);

	ret = neuron_pci_init(ndev);
	if (ret)
		return ret;

	ret = drmm_mutex_init(&ndev->drm, &ndev->mm_lock);
	if (ret)
		return ret;
	drm_mm_init(&ndev->mm, 0, ndev->mem_size);
	ret = drmm_add_action_or_reset(&ndev->drm, neuron_mm_fini, ndev);
	if (ret)
		return ret;

	ret = neuron_queues_init(ndev);
	if (ret)
		goto err_reset;

	ret = drm_dev_register(&ndev->drm, 0);
	if (ret) {
		neuron_err(ndev, "cannot register the DRM device: %d\n", ret);
		goto err_reset;
	}
	neuron_debugfs_init(ndev);
	neuron_link_register(ndev);
	drm_info(&ndev->drm, "%u DMA queues, %u cores, %u links, %llu MiB device memory\n",
		 ndev->num_dma, ndev->num_cores, ndev->num_links, ndev->mem_size >> 20);
	return 0;

err_reset:
	neuron_wr(ndev, NHW_REG_CTRL, NHW_CTRL_RESET);
	return ret;
}

static void neuron_remove(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	drm_dev_unplug(&ndev->drm);
	/* Other cards' link jobs into this one's memory fail now. */
	neuron_link_unregister(ndev);
	neuron_queues_stop(ndev);
	/*
	 * Jobs hold buffers, their device memory and DMA mappings: let the
	 * schedulers drain them (they fail at once now) before the device
	 * goes. The last one freed wakes us.
	 */
	if (!wait_event_timeout(ndev->jobs_wq, !atomic64_read(&ndev->stats.jobs),
				5 * HZ))
		neuron_warn(ndev, "%lld jobs still alive at removal\n",
			    atomic64_read(&ndev->stats.jobs));
	/* User mappings of device memory go with the BAR. */
	unmap_mapping_range(ndev->drm.anon_inode->i_mapping, 0, 0, 1);
}

static const struct pci_device_id neuron_pci_ids[] = {
	{ PCI_DEVICE(NHW_PCI_VENDOR_ID, NHW_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, neuron_pci_ids);

static struct pci_driver neuron_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = neuron_pci_ids,
	.probe = neuron_probe,
	.remove = neuron_remove,
	.dev_groups = neuron_dev_groups,
};

/* The slab caches of jobs and fences live as long as the module. */
static int __init neuron_init(void)
{
	int ret;

	ret = neuron_fence_cache_init();
	if (ret)
		return ret;
	ret = neuron_job_cache_init();
	if (ret)
		goto err_fence;
	ret = pci_register_driver(&neuron_pci_driver);
	if (ret)
		goto err_job;
	return 0;

err_job:
	neuron_job_cache_fini();
err_fence:
	neuron_fence_cache_fini();
	return ret;
}

static void __exit neuron_exit(void)
{
	pci_unregister_driver(&neuron_pci_driver);
	neuron_job_cache_fini();
	neuron_fence_cache_fini();
}

module_init(neuron_init);
module_exit(neuron_exit);

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The neuron-stack authors");
