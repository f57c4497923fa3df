// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: neuron links
 *
 * The cards of a fabric (docs/hardware.md "Links") are joined by links;
 * link l of a card is served by its own DMA engine, hardware queue
 * DMA + cores + l, which writes into the device memory of the card at the
 * link's other end (its fabric rank is NHW_LINK_PEER of NHW_REG_LINK(l)).
 * The topology is read at probe; whether a link's peer is present is read
 * live.
 *
 * A link job (DRM_NEURON_ENGINE_LINK) is a list of struct
 * drm_neuron_link_copy: from a device buffer of this card to a peer buffer
 * (neuron_prime.c) exported by the card at the link's other end. Every
 * peer buffer of a job is of that one card, @job->peer, which the job's
 * buffers keep alive. SUBMIT fails with -ENOLINK when the link is down or
 * that card has been removed; the job's fence fails with -ENODEV when the
 * device reports NISA_ERR_PEER or when the card is removed before the job
 * has run:
 *
 * - SUBMIT and run_job put a link job on the ring inside
 *   drm_dev_enter() of the peer card: once that card's removal has passed
 *   drm_dev_unplug(), no new job for it reaches a ring, and those still in
 *   a scheduler fail in run_job;
 * - the removal then (neuron_link_unregister()) resets the link queues of
 *   the other cards that point at it, failing every job on their rings
 *   (neuron_queue_peer_gone(), on each card's reset queue), and waits for
 *   that: a card that comes back (rescan) never receives a write meant
 *   for its previous life.
 *
 * Locking: neuron_cards_lock protects the list of cards; a card is on it
 * from the end of its probe to the start of its removal, so a card on the
 * list is fully set up and not being torn down.
 */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_gem.h"
#include "neuron_job.h"

static LIST_HEAD(neuron_cards);
static DEFINE_MUTEX(neuron_cards_lock);

/**
 * neuron_link_probe() - read the card's fabric and link topology
 * @ndev: device, its queue counts read
 *
 * Return: 0, or -ENODEV for registers that contradict each other.
 */
int neuron_link_probe(struct neuron_device *ndev)
{
	u32 rank, size, l, v;

	INIT_LIST_HEAD(&ndev->card);
	ndev->fabric = ndev->num_links ? neuron_rd(ndev, NHW_REG_FABRIC) : 0;
	if (!ndev->fabric)
		return 0;
	rank = NHW_FABRIC_RANK(ndev->fabric);
	size = NHW_FABRIC_SIZE(ndev->fabric);
	if (!NHW_FABRIC_ID(ndev->fabric) || rank >= size) {
		neuron_err(ndev, "bad fabric register 0x%08x\n", ndev->fabric);
		return -ENODEV;
	}
	for (l = 0; l < ndev->num_links; l++) {
		v = neuron_rd(ndev, NHW_REG_LINK(l));
		if (NHW_LINK_PEER(v) >= size) {
			neuron_err(ndev, "link %u: bad peer rank %u (rank %u of %u)\n",
				   l, NHW_LINK_PEER(v), rank, size);
			return -ENODEV;
		}
		ndev->link_peer[l] = NHW_LINK_PEER(v);
	}
	return 0;
}

/* Is a card of @ndev's fabric with @rank probed and not being removed? */
static bool neuron_card_listed(struct neuron_device *ndev, u32 rank)
{
	struct neuron_device *card;

	lockdep_assert_held(&neuron_cards_lock);
	list_for_each_entry(card, &neuron_cards, card)
		if (NHW_FABRIC_ID(card->fabric) == NHW_FABRIC_ID(ndev->fabric) &&
		    NHW_FABRIC_RANK(card->fabric) == rank)
			return true;
	return false;
}

/**
 * neuron_links_up() - the links whose peer card is there, now
 * @ndev: device
 *
 * A link is up when the device sees the card at its other end
 * (NHW_LINK_UP) and that card has a driver (this one): a card removed
 * from the bus but still present in the fabric takes no link job.
 *
 * Return: bit l set when link l is up; 0 once this card is unplugged.
 */
u32 neuron_links_up(struct neuron_device *ndev)
{
	u32 up = 0, l;
	int idx;

	if (!ndev->fabric || !drm_dev_enter(&ndev->drm, &idx))
		return 0;
	for (l = 0; l < ndev->num_links; l++)
		if (neuron_rd(ndev, NHW_REG_LINK(l)) & NHW_LINK_UP)
			up |= BIT(l);
	drm_dev_exit(idx);
	mutex_lock(&neuron_cards_lock);
	for (l = 0; l < ndev->num_links; l++)
		if ((up & BIT(l)) && !neuron_card_listed(ndev, ndev->link_peer[l]))
			up &= ~BIT(l);
	mutex_unlock(&neuron_cards_lock);
	return up;
}

/**
 * neuron_link_register() - list a probed card, a link peer of others
 * @ndev: device, registered
 */
void neuron_link_register(struct neuron_device *ndev)
{
	mutex_lock(&neuron_cards_lock);
	list_add_tail(&ndev->card, &neuron_cards);
	mutex_unlock(&neuron_cards_lock);
}

/* Apply @fn to the link queues of other cards whose peer is @gone. */
static void neuron_link_for_peers(struct neuron_device *gone,
				  void (*fn)(struct neuron_queue *q))
{
	struct neuron_device *ndev;
	u32 l;

	lockdep_assert_held(&neuron_cards_lock);
	list_for_each_entry(ndev, &neuron_cards, card) {
		if (!ndev->fabric ||
		    NHW_FABRIC_ID(ndev->fabric) != NHW_FABRIC_ID(gone->fabric))
			continue;
		for (l = 0; l < ndev->num_links; l++)
			if (ndev->link_peer[l] == NHW_FABRIC_RANK(gone->fabric))
				fn(neuron_link_queue(ndev, l));
	}
}

static void neuron_link_queue_peer_gone(struct neuron_queue *q)
{
	queue_work(q->ndev->reset_wq, &q->peer_gone);
}

static void neuron_link_flush_peer_gone(struct neuron_queue *q)
{
	flush_work(&q->peer_gone);
}

/**
 * neuron_link_unregister() - a card is being removed: fail the link jobs
 * of other cards that write into it
 * @gone: the card, unplugged (drm_dev_unplug())
 *
 * Returns once those jobs have failed with -ENODEV (bounded by a queue
 * reset of each such link).
 */
void neuron_link_unregister(struct neuron_device *gone)
{
	mutex_lock(&neuron_cards_lock);
	list_del_init(&gone->card);
	if (gone->fabric) {
		neuron_link_for_peers(gone, neuron_link_queue_peer_gone);
		neuron_link_for_peers(gone, neuron_link_flush_peer_gone);
	}
	mutex_unlock(&neuron_cards_lock);
}

/* Checks of one copy that need no lookup: -EINVAL. */
static int neuron_link_copy_check(const struct drm_neuron_link_copy *c)
{
	u32 esize;

	if (!c->size || c->reduce >= NISA_NUM_LINK_REDUCE)
		return -EINVAL;
	if (c->reduce == NISA_REDUCE_NONE)
		return c->dtype ? -EINVAL : 0;
	if (!nisa_link_reduces_dtype(c->dtype))
		return -EINVAL;
	esize = nisa_dtype_size(c->dtype);
	if (c->size % esize || c->src_offset % esize || c->dst_offset % esize)
		return -EINVAL;
	return 0;
}

/*
 * Look up @handle, kept in job->bos: -ENOENT, -EXDEV if it is not what
 * @peer asks for (a peer buffer, else a device buffer of this card),
 * -EINVAL for (@offset, @size) outside it.
 */
static struct neuron_bo *neuron_link_bo(struct neuron_job *job,
					struct drm_file *file, u32 handle,
					u64 offset, u64 size, bool peer)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, handle);
	struct neuron_bo *bo;
	u64 end;

	if (!obj)
		return ERR_PTR(-ENOENT);
	job->bos[job->bo_count++] = obj;
	bo = to_neuron_bo(obj);
	if (peer ? !bo->exporter : !neuron_bo_is_local_dev(bo))
		return ERR_PTR(-EXDEV);
	if (check_add_overflow(offset, size, &end) || end > obj->size)
		return ERR_PTR(-EINVAL);
	return bo;
}

/*
 * Is @peer the card at the other end of @link of @ndev? Every peer buffer
 * of a job must be of one card: two different cards can only be the same
 * rank if one of them has been removed (-ENOLINK).
 */
static int neuron_link_check_peer(struct neuron_job *job, u32 link,
				  struct neuron_device *peer)
{
	struct neuron_device *ndev = job->queue->ndev;

	if (!ndev->fabric ||
	    NHW_FABRIC_ID(peer->fabric) != NHW_FABRIC_ID(ndev->fabric) ||
	    NHW_FABRIC_RANK(peer->fabric) != ndev->link_peer[link])
		return -EXDEV;
	if (job->peer && job->peer != peer)
		return drm_dev_is_unplugged(&peer->drm) ||
		       drm_dev_is_unplugged(&job->peer->drm) ? -ENOLINK : -EXDEV;
	job->peer = peer;
	return 0;
}

/**
 * neuron_link_build() - the descriptors of a link job
 * @job: from neuron_job_alloc(), its (link) queue set
 * @file: the submitter, whose handles @args names
 * @args: the SUBMIT arguments, checked by neuron_submit_checks()
 *
 * Return: 0 or a negative errno: -EFAULT, -ENOENT, -EINVAL or -EXDEV as
 * struct drm_neuron_link_copy says.
 */
int neuron_link_build(struct neuron_job *job, struct drm_file *file,
		      struct drm_neuron_submit *args)
{
	struct drm_neuron_link_copy __user *ucopies = u64_to_user_ptr(args->copies);
	struct neuron_device *ndev = job->queue->ndev;
	u32 link = job->queue->idx - ndev->num_dma - ndev->num_cores, i;
	struct drm_neuron_link_copy c;
	struct neuron_bo *src, *dst;
	int ret;

	for (i = 0; i < args->copy_count; i++) {
		struct nhw_link_desc *d = &job->descs[i].link;

		memset(d, 0, sizeof(job->descs[i]));
		if (copy_from_user(&c, &ucopies[i], sizeof(c)))
			return -EFAULT;
		ret = neuron_link_copy_check(&c);
		if (ret)
			return ret;
		src = neuron_link_bo(job, file, c.src_handle, c.src_offset, c.size, false);
		if (IS_ERR(src))
			return PTR_ERR(src);
		dst = neuron_link_bo(job, file, c.dst_handle, c.dst_offset, c.size, true);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		ret = neuron_link_check_peer(job, link,
					     to_neuron_device(dst->exporter->base.base.dev));
		if (ret)
			return ret;
		d->op = NHW_OP_LINK;
		d->reduce = c.reduce;
		d->dtype = c.dtype;
		d->tag = cpu_to_le32(i);
		d->src_off = cpu_to_le64(src->node.start + c.src_offset);
		d->dst_off = cpu_to_le64(dst->exporter->node.start + c.dst_offset);
		d->len = cpu_to_le64(c.size);
	}
	job->ndesc = args->copy_count;
	return 0;
}

/**
 * neuron_link_enter() - may a link job go on its ring now?
 * @job: a built link job
 * @idx: for neuron_link_exit(), on success
 *
 * Called by SUBMIT: the link must be up and its peer card not removed.
 * Until drm_dev_exit(@idx), the peer card's removal waits (it then fails
 * the jobs on the ring).
 *
 * Return: 0 or -ENOLINK.
 */
int neuron_link_enter(struct neuron_job *job, int *idx)
{
	struct neuron_device *ndev = job->queue->ndev;
	u32 link = job->queue->idx - ndev->num_dma - ndev->num_cores;

	if (!(neuron_links_up(ndev) & BIT(link)))
		return -ENOLINK;
	if (!drm_dev_enter(&job->peer->drm, idx))
		return -ENOLINK;
	return 0;
}
