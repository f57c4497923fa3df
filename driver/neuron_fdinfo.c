// SPDX-License-Identifier: GPL-2.0-only
/*
 * DRM fdinfo usage statistics (Documentation/gpu/drm-usage-stats.rst):
 * engine busy time per class and memory per placement, for this file.
 */
#include <linux/fs.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_gem.h"

void neuron_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct neuron_file_priv *fpriv = file->driver_priv;
	struct neuron_device *ndev = fpriv->ndev;
	struct drm_memory_stats mem[2] = { };
	static const char * const region[2] = { "device", "host" };
	struct drm_gem_object *obj;
	int id, i;

	drm_printf(p, "drm-engine-dma:\t%lld ns\n",
		   atomic64_read(&fpriv->stats->busy_ns[NEURON_ENGINE_DMA]));
	drm_printf(p, "drm-engine-capacity-dma:\t%u\n", ndev->num_dma);
	drm_printf(p, "drm-engine-core:\t%lld ns\n",
		   atomic64_read(&fpriv->stats->busy_ns[NEURON_ENGINE_CORE]));
	drm_printf(p, "drm-engine-capacity-core:\t%u\n", ndev->num_cores);
	if (ndev->num_links) {
		drm_printf(p, "drm-engine-link:\t%lld ns\n",
			   atomic64_read(&fpriv->stats->busy_ns[NEURON_ENGINE_LINK]));
		drm_printf(p, "drm-engine-capacity-link:\t%u\n", ndev->num_links);
	}

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		bool host = to_neuron_bo(obj)->placement == DRM_NEURON_BO_HOST;
		struct drm_memory_stats *m = &mem[host];

		/* A peer buffer is another card's memory: that card counts it. */
		if (to_neuron_bo(obj)->exporter)
			continue;

		if (obj->handle_count > 1)
			m->shared += obj->size;
		else
			m->private += obj->size;
		/* A host buffer's pages exist once touched. */
		m->resident += host ? (u64)READ_ONCE(obj->filp->f_mapping->nrpages) << PAGE_SHIFT :
				      obj->size;
	}
	spin_unlock(&file->table_lock);
	for (i = 0; i < 2; i++) {
		drm_print_memory_stats(p, &mem[i], 0, region[i]);
		/* The older key, still read by some tools. */
		drm_printf(p, "drm-memory-%s:\t%llu KiB\n", region[i],
			   (mem[i].private + mem[i].shared) >> 10);
	}
}
