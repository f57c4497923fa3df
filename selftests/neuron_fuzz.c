// SPDX-License-Identifier: GPL-2.0
/*
 * An ioctl fuzzer for neuron.ko: child processes issue a seeded random mix
 * of valid and mutated calls of every neuron ioctl, of the generic DRM ones
 * the stack uses (GEM close, syncobj create/destroy/wait/signal, PRIME
 * export/import) and of mmap/munmap of buffers and dma-bufs; some are
 * killed (SIGKILL) in the middle of it, jobs in flight; buffers are shared
 * through PRIME across files and across processes. Valid calls must
 * succeed (or fail only as documented, e.g. -ENOMEM for full device
 * memory) and move the right data; mutated ones must fail cleanly or
 * succeed harmlessly. At the end, with every file closed, the card's
 * counters (sysfs bos, jobs, pinned, mem_used) are back where they were
 * and the kernel has not warned (the taint W bit; the runner also scans
 * dmesg).
 *
 * Environment: NEURON_FUZZ_SEED (default: from the clock; always printed),
 * NEURON_FUZZ_ITERS (child processes, default 200, 0: no bound),
 * NEURON_FUZZ_SECONDS (time bound, default 20), NEURON_FUZZ_OPS (calls per
 * child, default 150), NEURON_FUZZ_PROCS (children at once, default 2).
 * docs/fuzzing.md says how to replay a seed.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

#define MiB (1ULL << 20)

#define MAX_BOS		24
#define MAX_SYNCS	6
#define MAX_MAPS	6
#define KBO_SIZE	(64 * 1024)
#define KBO_NOPS	32	/* the kernel buffer starts with NOPs, then noise */
#define TAINT_WARN	(1 << 9)

/* splitmix64: small, good enough, and the same everywhere. */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

/* A value for a mutated field: an edge, a small number, or noise. */
static uint64_t wild(struct rng *r)
{
	static const uint64_t edge[] = {
		0, 1, 2, 3, 7, 64, 65, 128, 129, 4095, 4096, 4097, 0xffff,
		0x7fffffff, 0x80000000, 0xffffffff, 1ULL << 32, 1ULL << 40,
		(1ULL << 40) + 1, INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX,
		UINT64_MAX - 4095,
	};

	switch (below(r, 3)) {
	case 0:
		return edge[below(r, sizeof(edge) / sizeof(edge[0]))];
	case 1:
		return below(r, 1 << 22);
	default:
		return rnd(r);
	}
}

struct fbo {
	uint32_t handle;
	uint32_t placement;
	uint64_t size;		/* as created, before rounding */
};

struct fmap {
	void *p;
	size_t len;
	bool touch;		/* a valid mapping of a whole buffer */
};

/* One child's state: what it has created, and what went wrong. */
struct ctx {
	int fd, fd2;		/* two opens of the card: PRIME between them */
	struct rng r;
	struct fbo bo[MAX_BOS];
	int nbo;
	uint32_t sync[MAX_SYNCS];
	bool fenced[MAX_SYNCS];	/* has a fence: may be waited for */
	int nsync;
	struct fmap map[MAX_MAPS];
	int nmap;
	uint32_t kbo;		/* device buffer holding kernels */
	uint64_t ndma, ncores;
	int shared_fd[2];	/* dma-bufs the parent shares, or -1 */
	/*
	 * On the parent's file, which another child may use at the same
	 * time (and close a handle of ours): a valid call may then find its
	 * handle gone or replaced.
	 */
	bool lenient;
	int bad;
	unsigned long op;
};

static void unexpected(struct ctx *c, const char *what, long long ret)
{
	fprintf(stderr, "# op %lu: %s: unexpected %lld (%s)\n", c->op, what, ret,
		ret < 0 ? strerror((int)-ret) : "success");
	c->bad++;
}

/* Did a valid call end as it may? 0, or one of the errnos listed. */
static void expect(struct ctx *c, const char *what, int ret, const int *ok)
{
	if (!ret || (c->lenient && (ret == -ENOENT || ret == -EINVAL)))
		return;
	for (; ok && *ok; ok++)
		if (ret == -*ok)
			return;
	unexpected(c, what, ret);
}

/* A mutated call: any clean failure, or success. Never a crash. */
static void mutated(struct ctx *c, const char *what, int ret)
{
	if (ret > 0 || ret < -4095)
		unexpected(c, what, ret);
}

static const int ok_mem[] = { ENOMEM, E2BIG, 0 };

static struct fbo *pick_bo(struct ctx *c)
{
	return c->nbo ? &c->bo[below(&c->r, c->nbo)] : NULL;
}

static void forget_handle(struct ctx *c, uint32_t handle)
{
	if (handle == c->kbo)
		c->kbo = 0;
	for (int i = 0; i < c->nbo; i++)
		if (c->bo[i].handle == handle)
			c->bo[i--] = c->bo[--c->nbo];
}

/* ---- buffers ---- */

static void op_bo_create(struct ctx *c, bool mutate)
{
	struct drm_neuron_bo_create a = {
		.size = 1 + below(&c->r, 2 * MiB),
		.placement = (uint32_t)below(&c->r, 2),
	};
	int ret;

	if (c->nbo == MAX_BOS) {
		struct fbo *b = pick_bo(c);

		nt_bo_close(c->fd, b->handle);
		forget_handle(c, b->handle);
	}
	/* Now and then a big host buffer: its copies take a while to pin. */
	if (a.placement == DRM_NEURON_BO_HOST && chance(&c->r, 5))
		a.size = 64 * MiB;
	if (mutate) {
		switch (below(&c->r, 5)) {
		case 0: a.size = wild(&c->r); break;
		case 1: a.placement = (uint32_t)wild(&c->r); break;
		case 2: a.flags = (uint32_t)wild(&c->r); break;
		case 3: a.pad = (uint32_t)wild(&c->r); break;
		default: a.handle = (uint32_t)wild(&c->r); break;
		}
	}
	ret = nt_ioctl(c->fd, DRM_IOCTL_NEURON_BO_CREATE, &a);
	if (mutate)
		mutated(c, "BO_CREATE (mutated)", ret);
	else
		expect(c, "BO_CREATE", ret, ok_mem);
	if (!ret)
		c->bo[c->nbo++] = (struct fbo){ a.handle, a.placement, a.size };
}

static void op_bo_close(struct ctx *c, bool mutate)
{
	struct fbo *b = pick_bo(c);
	uint32_t h;
	int ret;

	if (mutate || !b) {
		h = (uint32_t)wild(&c->r);
		ret = nt_bo_close(c->fd, h);
		mutated(c, "GEM_CLOSE (mutated)", ret);
		if (!ret)
			forget_handle(c, h);
		return;
	}
	h = b->handle;
	expect(c, "GEM_CLOSE", nt_bo_close(c->fd, h), NULL);
	forget_handle(c, h);
}

static void op_bo_info(struct ctx *c, bool mutate)
{
	struct fbo *b = pick_bo(c);
	struct drm_neuron_bo_info i = { 0 };
	int ret;

	if (mutate || !b) {
		i.handle = (uint32_t)wild(&c->r);
		mutated(c, "BO_INFO (mutated)", nt_ioctl(c->fd, DRM_IOCTL_NEURON_BO_INFO, &i));
		return;
	}
	i.handle = b->handle;
	ret = nt_ioctl(c->fd, DRM_IOCTL_NEURON_BO_INFO, &i);
	expect(c, "BO_INFO", ret, NULL);
	if (!ret && !c->lenient &&
	    (i.placement != b->placement || i.size != ((b->size + 4095) & ~4095ULL)))
		unexpected(c, "BO_INFO placement/size", (long long)i.size);
}

static void unmap_one(struct ctx *c, int i)
{
	if (munmap(c->map[i].p, c->map[i].len))
		unexpected(c, "munmap", -errno);
	c->map[i] = c->map[--c->nmap];
}

/*
 * Fault a page of a mapping in, writing. Not checked: a job of this child
 * still in flight may be writing the same buffer (the round trip checks
 * data, on buffers of its own).
 */
static void touch(struct ctx *c, struct fmap *m)
{
	volatile uint8_t *p = m->p;
	size_t at = below(&c->r, m->len);

	p[at] = (uint8_t)(p[at] + 1);
}

static void op_mmap(struct ctx *c, bool mutate)
{
	struct fbo *b = pick_bo(c);
	struct drm_neuron_bo_info i = { 0 };
	size_t len;
	off_t off;
	void *p;

	if (!b)
		return;
	if (c->nmap == MAX_MAPS)
		unmap_one(c, (int)below(&c->r, c->nmap));
	i.handle = b->handle;
	if (nt_ioctl(c->fd, DRM_IOCTL_NEURON_BO_INFO, &i)) {
		if (!c->lenient)
			unexpected(c, "BO_INFO for mmap", -errno);
		return;
	}
	len = i.size;
	off = (off_t)i.mmap_offset;
	if (mutate) {
		switch (below(&c->r, 4)) {
		case 0: len += 4096 * (1 + below(&c->r, 4)); break;
		case 1: off += 4096 * (1 + below(&c->r, 4)); break;
		case 2: off = (off_t)(wild(&c->r) & ~4095ULL & INT64_MAX); break;
		default: off -= 4096; break;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, off);
	if (p == MAP_FAILED) {
		if (!mutate && !c->lenient)
			unexpected(c, "mmap", -errno);
		return;
	}
	c->map[c->nmap++] = (struct fmap){ p, len, !mutate };
	if (!mutate)
		touch(c, &c->map[c->nmap - 1]);
}

static void op_touch_or_unmap(struct ctx *c)
{
	int i;

	if (!c->nmap)
		return;
	i = (int)below(&c->r, c->nmap);
	if (chance(&c->r, 50))
		unmap_one(c, i);
	else if (c->map[i].touch)
		touch(c, &c->map[i]);	/* a mapping outlives its handle */
}

/* ---- syncobjs ---- */

static int pick_sync(struct ctx *c, bool fenced)
{
	int i = (int)below(&c->r, MAX_SYNCS);

	for (int n = 0; n < c->nsync; n++, i++)
		if (!fenced || c->fenced[i % c->nsync])
			return i % c->nsync;
	return -1;
}

static void op_syncobj(struct ctx *c, bool mutate)
{
	struct drm_syncobj_create cr = { 0 };
	struct drm_syncobj_destroy d = { 0 };
	struct drm_syncobj_array sa = { 0 };
	struct drm_syncobj_wait w = { 0 };
	struct timespec now;
	uint32_t h[3];
	int i, n, ret;

	switch (below(&c->r, 4)) {
	case 0:		/* create */
		if (c->nsync == MAX_SYNCS) {
			i = (int)below(&c->r, c->nsync);
			nt_syncobj_destroy(c->fd, c->sync[i]);
			c->sync[i] = c->sync[--c->nsync];
			c->fenced[i] = c->fenced[c->nsync];
		}
		cr.flags = chance(&c->r, 30) ? DRM_SYNCOBJ_CREATE_SIGNALED : 0;
		if (mutate)
			cr.flags = (uint32_t)wild(&c->r);
		ret = nt_ioctl(c->fd, DRM_IOCTL_SYNCOBJ_CREATE, &cr);
		if (mutate)
			mutated(c, "SYNCOBJ_CREATE (mutated)", ret);
		else
			expect(c, "SYNCOBJ_CREATE", ret, NULL);
		if (!ret) {
			c->fenced[c->nsync] = cr.flags & DRM_SYNCOBJ_CREATE_SIGNALED;
			c->sync[c->nsync++] = cr.handle;
		}
		return;
	case 1:		/* destroy */
		if (mutate || !c->nsync) {
			d.handle = (uint32_t)wild(&c->r);
			ret = nt_ioctl(c->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
			mutated(c, "SYNCOBJ_DESTROY (mutated)", ret);
			for (i = 0; !ret && i < c->nsync; i++)
				if (c->sync[i] == d.handle) {
					c->sync[i] = c->sync[--c->nsync];
					c->fenced[i] = c->fenced[c->nsync];
				}
			return;
		}
		i = (int)below(&c->r, c->nsync);
		expect(c, "SYNCOBJ_DESTROY", nt_syncobj_destroy(c->fd, c->sync[i]), NULL);
		c->sync[i] = c->sync[--c->nsync];
		c->fenced[i] = c->fenced[c->nsync];
		return;
	case 2:		/* signal */
		if (!c->nsync)
			return;
		i = (int)below(&c->r, c->nsync);
		h[0] = mutate ? (uint32_t)wild(&c->r) : c->sync[i];
		sa.handles = (uintptr_t)h;
		sa.count_handles = 1;
		if (mutate && chance(&c->r, 50))
			sa.count_handles = (uint32_t)wild(&c->r) % 4096;
		ret = nt_ioctl(c->fd, DRM_IOCTL_SYNCOBJ_SIGNAL, &sa);
		if (mutate)
			mutated(c, "SYNCOBJ_SIGNAL (mutated)", ret);
		else
			expect(c, "SYNCOBJ_SIGNAL", ret, NULL);
		if (!ret && !mutate)
			c->fenced[i] = true;
		return;
	default:	/* wait, for at most 20 ms */
		n = (int)below(&c->r, 3) + 1;
		for (i = 0; i < n; i++) {
			int s = pick_sync(c, !mutate);

			if (s < 0)
				return;
			h[i] = c->sync[s];
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		w.handles = (uintptr_t)h;
		w.count_handles = (uint32_t)n;
		w.timeout_nsec = now.tv_sec * 1000000000LL + now.tv_nsec +
				 (int64_t)below(&c->r, 20000000);
		w.flags = (uint32_t)below(&c->r, 4);	/* WAIT_ALL, WAIT_FOR_SUBMIT */
		if (mutate) {
			switch (below(&c->r, 3)) {
			case 0: w.flags = (uint32_t)wild(&c->r); break;
			case 1: w.count_handles = (uint32_t)wild(&c->r) % 4096; break;
			default: h[0] = (uint32_t)wild(&c->r); break;
			}
		}
		ret = nt_ioctl(c->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		if (mutate) {
			mutated(c, "SYNCOBJ_WAIT (mutated)", ret);
		} else {
			static const int ok[] = { ETIME, 0 };

			expect(c, "SYNCOBJ_WAIT", ret, ok);
		}
		return;
	}
}

/* ---- jobs ---- */

/* A valid copy of @size bytes at most between two live buffers. */
static struct drm_neuron_copy valid_copy(struct ctx *c, uint64_t max)
{
	struct fbo *s = pick_bo(c), *d = pick_bo(c);
	uint64_t lim = s->size < d->size ? s->size : d->size;
	struct drm_neuron_copy cp = { .src_handle = s->handle, .dst_handle = d->handle };

	if (lim > max)
		lim = max;
	cp.size = 1 + below(&c->r, lim);
	cp.src_offset = below(&c->r, s->size - cp.size + 1);
	cp.dst_offset = below(&c->r, d->size - cp.size + 1);
	return cp;
}

static void mutate_submit(struct ctx *c, struct drm_neuron_submit *s)
{
	switch (below(&c->r, 12)) {
	case 0: s->engine = (uint32_t)wild(&c->r); break;
	case 1: s->index = (uint32_t)wild(&c->r); break;
	case 2: s->flags = (uint32_t)wild(&c->r); break;
	case 3: s->pad = (uint32_t)wild(&c->r); break;
	case 4: s->copy_count = (uint32_t)wild(&c->r); break;
	case 5: s->copies = wild(&c->r); break;
	case 6: s->in_sync_count = (uint32_t)wild(&c->r); break;
	case 7: s->in_syncs = wild(&c->r); break;
	case 8: s->out_sync.handle = (uint32_t)wild(&c->r); break;
	case 9: s->out_sync.pad = (uint32_t)wild(&c->r); break;
	case 10: s->out_sync.point = wild(&c->r); break;
	default:
		/* A timeline point to wait for: there may be none. */
		if (s->in_sync_count)
			((struct drm_neuron_sync *)(uintptr_t)s->in_syncs)[0].point = wild(&c->r);
		break;
	}
}

static void mutate_copy(struct ctx *c, struct drm_neuron_copy *cp)
{
	switch (below(&c->r, 5)) {
	case 0: cp->src_handle = (uint32_t)wild(&c->r); break;
	case 1: cp->dst_handle = (uint32_t)wild(&c->r); break;
	case 2: cp->src_offset = wild(&c->r); break;
	case 3: cp->dst_offset = wild(&c->r); break;
	default: cp->size = wild(&c->r); break;
	}
}

/* In-syncs (fenced syncobjs) and an out-sync for @s; the out-sync's index. */
static int add_syncs(struct ctx *c, struct drm_neuron_submit *s,
		     struct drm_neuron_sync *in)
{
	int n = (int)below(&c->r, 3), out;

	for (int i = 0; i < n; i++) {
		int k = pick_sync(c, true);

		if (k < 0)
			break;
		in[s->in_sync_count++] = (struct drm_neuron_sync){ .handle = c->sync[k] };
	}
	s->in_syncs = (uintptr_t)in;
	out = chance(&c->r, 80) ? pick_sync(c, false) : -1;
	if (out >= 0)
		s->out_sync.handle = c->sync[out];
	return out;
}

static void submitted(struct ctx *c, struct drm_neuron_submit *s, int out, int ret)
{
	if (ret || !s->out_sync.handle)
		return;
	for (int i = 0; i < c->nsync; i++)
		if (c->sync[i] == s->out_sync.handle)
			c->fenced[i] = true;
	(void)out;
}

static void op_submit_dma(struct ctx *c, bool mutate)
{
	static struct drm_neuron_copy cp[DRM_NEURON_MAX_COPIES + 2];
	struct drm_neuron_sync in[DRM_NEURON_MAX_SYNCS + 2] = { 0 };
	struct drm_neuron_submit s = { .engine = DRM_NEURON_ENGINE_DMA };
	int n = 1 + (int)below(&c->r, 4), out, ret;
	uint64_t max = chance(&c->r, 5) ? 64 * MiB : 256 * 1024;

	if (!c->nbo)
		return;
	for (size_t i = 0; i < sizeof(cp) / sizeof(cp[0]); i++)
		cp[i] = valid_copy(c, max);
	s.index = (uint32_t)below(&c->r, c->ndma);
	s.copies = (uintptr_t)cp;
	s.copy_count = (uint32_t)n;
	out = add_syncs(c, &s, in);
	if (mutate) {
		if (chance(&c->r, 50))
			mutate_copy(c, &cp[below(&c->r, n)]);
		else
			mutate_submit(c, &s);
	}
	ret = nt_ioctl(c->fd, DRM_IOCTL_NEURON_SUBMIT, &s);
	if (mutate)
		mutated(c, "SUBMIT dma (mutated)", ret);
	else
		expect(c, "SUBMIT dma", ret, ok_mem);
	submitted(c, &s, out, ret);
}

static void op_submit_core(struct ctx *c, bool mutate)
{
	struct drm_neuron_bo_ref refs[DRM_NEURON_MAX_BOS + 2];
	struct drm_neuron_sync in[DRM_NEURON_MAX_SYNCS + 2] = { 0 };
	struct drm_neuron_submit s = { .engine = DRM_NEURON_ENGINE_CORE };
	uint32_t nref = 0;
	int out, ret;

	if (!c->ncores || !c->kbo)
		return;
	for (int i = 0; i < c->nbo && nref < 4; i++)
		if (c->bo[i].placement == DRM_NEURON_BO_DEVICE && chance(&c->r, 50))
			refs[nref++] = (struct drm_neuron_bo_ref){
				c->bo[i].handle, 1 + (uint32_t)below(&c->r, 3) };
	for (uint32_t i = nref; i < sizeof(refs) / sizeof(refs[0]); i++)
		refs[i] = (struct drm_neuron_bo_ref){ c->kbo, DRM_NEURON_ACCESS_READ };
	s.index = (uint32_t)below(&c->r, c->ncores);
	s.kernel_handle = c->kbo;
	/* NOPs, or now and then a stretch of noise the device must refuse. */
	if (chance(&c->r, 80)) {
		s.kernel_size = (1 + below(&c->r, KBO_NOPS)) * sizeof(struct nisa_insn);
	} else {
		uint64_t n = KBO_SIZE / sizeof(struct nisa_insn);

		s.kernel_offset = below(&c->r, n) * sizeof(struct nisa_insn);
		s.kernel_size = (1 + below(&c->r, n - s.kernel_offset /
					   sizeof(struct nisa_insn))) * sizeof(struct nisa_insn);
	}
	s.bos = (uintptr_t)refs;
	s.bo_count = nref;
	out = add_syncs(c, &s, in);
	if (mutate) {
		switch (below(&c->r, 6)) {
		case 0: s.kernel_handle = (uint32_t)wild(&c->r); break;
		case 1: s.kernel_offset = wild(&c->r); break;
		case 2: s.kernel_size = wild(&c->r); break;
		case 3: s.bo_count = (uint32_t)wild(&c->r); break;
		case 4: refs[0].access = (uint32_t)wild(&c->r); s.bo_count |= 1; break;
		default: mutate_submit(c, &s); break;
		}
	}
	ret = nt_ioctl(c->fd, DRM_IOCTL_NEURON_SUBMIT, &s);
	if (mutate)
		mutated(c, "SUBMIT core (mutated)", ret);
	else
		expect(c, "SUBMIT core", ret, NULL);
	submitted(c, &s, out, ret);
}

static void op_wait(struct ctx *c, bool mutate)
{
	struct drm_neuron_wait w = { 0 };
	int k = pick_sync(c, true), ret;

	if (k < 0 && !mutate)
		return;
	w.handle = k >= 0 ? c->sync[k] : 0;
	w.timeout_ns = (int64_t)below(&c->r, 50000000);
	if (mutate) {
		switch (below(&c->r, 4)) {
		case 0: w.handle = (uint32_t)wild(&c->r); break;
		case 1: w.flags = (uint32_t)wild(&c->r); break;
		case 2: w.point = wild(&c->r); break;
		/* Negative waits for ever: every job ends, within its timeout. */
		default: w.timeout_ns = (int64_t)wild(&c->r) % 50000000; break;
		}
	}
	ret = nt_ioctl(c->fd, DRM_IOCTL_NEURON_WAIT, &w);
	if (mutate) {
		mutated(c, "WAIT (mutated)", ret);
	} else {
		static const int ok[] = { ETIME, 0 };

		expect(c, "WAIT", ret, ok);
		if (!ret && w.status && w.status != -EIO && w.status != -ECANCELED &&
		    w.status != -ETIMEDOUT)
			unexpected(c, "WAIT status", w.status);
	}
}

/*
 * A round trip whose data is checked: host -> device -> host on random
 * DMA queues, the second job waiting for the first through a syncobj.
 */
static void op_roundtrip(struct ctx *c)
{
	uint64_t size = 1 + below(&c->r, 256 * 1024), off = below(&c->r, 8192), msz;
	uint32_t a, d, b, s1, s2;
	struct drm_neuron_copy up = { .src_offset = off, .size = size };
	struct drm_neuron_copy down = { .dst_offset = off, .size = size };
	struct drm_neuron_sync after = { 0 };
	uint8_t *pa = NULL, *pb = NULL;
	int32_t status = 1;
	int ret;

	if (nt_bo_create(c->fd, size + off, DRM_NEURON_BO_HOST, &a))
		return;
	ret = nt_bo_create(c->fd, size, DRM_NEURON_BO_DEVICE, &d);
	if (ret) {
		expect(c, "BO_CREATE device", ret, ok_mem);
		nt_bo_close(c->fd, a);
		return;
	}
	if (nt_bo_create(c->fd, size + off, DRM_NEURON_BO_HOST, &b) ||
	    nt_syncobj_create(c->fd, &s1) || nt_syncobj_create(c->fd, &s2)) {
		unexpected(c, "round trip setup", -1);
		return;
	}
	pa = nt_bo_map(c->fd, a, &msz);
	pb = nt_bo_map(c->fd, b, &msz);
	if (!pa || !pb) {
		if (!c->lenient)
			unexpected(c, "round trip mmap", -errno);
		return;
	}
	for (uint64_t i = 0; i < size; i++)
		pa[off + i] = (uint8_t)(i * 13 + c->op);
	up.src_handle = a;
	up.dst_handle = d;
	down.src_handle = d;
	down.dst_handle = b;
	after.handle = s1;
	ret = nt_submit_copies(c->fd, (uint32_t)below(&c->r, c->ndma), &up, 1, NULL, 0, s1);
	if (!ret)
		ret = nt_submit_copies(c->fd, (uint32_t)below(&c->r, c->ndma), &down, 1,
				       &after, 1, s2);
	if (!ret)
		ret = nt_wait(c->fd, s2, 0, 20000, &status, NULL);
	expect(c, "round trip", ret, ok_mem);
	if (!ret && !c->lenient && (status || memcmp(pa + off, pb + off, size)))
		unexpected(c, "round trip data", status);
	munmap(pa, msz);
	munmap(pb, msz);
	nt_bo_close(c->fd, a);
	nt_bo_close(c->fd, d);
	nt_bo_close(c->fd, b);
	nt_syncobj_destroy(c->fd, s1);
	nt_syncobj_destroy(c->fd, s2);
}

/* ---- PRIME ---- */

static void use_imported(struct ctx *c, int dmabuf, uint32_t handle, bool rw)
{
	struct drm_neuron_bo_info i = { .handle = handle };
	void *p;

	if (nt_ioctl(c->fd2, DRM_IOCTL_NEURON_BO_INFO, &i)) {
		unexpected(c, "BO_INFO of an import", -errno);
		return;
	}
	/* The dma-buf maps as the buffer does. */
	p = mmap(NULL, i.size, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, dmabuf, 0);
	/*
	 * A buffer has one dma-buf, whose file mode its first export chose:
	 * a mutated export without DRM_RDWR makes later ones read-only too.
	 */
	if (p == MAP_FAILED && errno == EACCES && rw) {
		rw = false;
		p = mmap(NULL, i.size, PROT_READ, MAP_SHARED, dmabuf, 0);
	}
	if (p == MAP_FAILED) {
		unexpected(c, "mmap of a dma-buf", -errno);
		return;
	}
	if (rw)
		((volatile uint8_t *)p)[below(&c->r, i.size)] = 1;
	else
		(void)((volatile uint8_t *)p)[below(&c->r, i.size)];
	munmap(p, i.size);
}

static void op_prime(struct ctx *c, bool mutate)
{
	struct drm_prime_handle ex = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle im = { 0 };
	struct fbo *b = pick_bo(c);
	int ret, shared = c->shared_fd[below(&c->r, 2)];

	/* A buffer of the parent's, through an inherited dma-buf fd. */
	if (chance(&c->r, 30) && shared >= 0) {
		im.fd = shared;
		ret = nt_ioctl(c->fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &im);
		expect(c, "PRIME_FD_TO_HANDLE (parent's)", ret, NULL);
		if (!ret) {
			use_imported(c, shared, im.handle, true);
			nt_bo_close(c->fd2, im.handle);
		}
		return;
	}
	if (!b)
		return;
	ex.handle = b->handle;
	if (mutate) {
		if (chance(&c->r, 50))
			ex.handle = (uint32_t)wild(&c->r);
		else
			ex.flags = (uint32_t)wild(&c->r);
	}
	ret = nt_ioctl(c->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ex);
	if (mutate)
		mutated(c, "PRIME_HANDLE_TO_FD (mutated)", ret);
	else
		expect(c, "PRIME_HANDLE_TO_FD", ret, NULL);
	if (ret) {
		/* Import something that is not a dma-buf of ours. */
		im.fd = chance(&c->r, 50) ? c->fd : (int)wild(&c->r);
		mutated(c, "PRIME_FD_TO_HANDLE (mutated)",
			nt_ioctl(c->fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &im));
		return;
	}
	im.fd = ex.fd;
	ret = nt_ioctl(c->fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &im);
	expect(c, "PRIME_FD_TO_HANDLE", ret, NULL);
	if (!ret) {
		/* A mutated export may have made a read-only dma-buf. */
		use_imported(c, ex.fd, im.handle, ex.flags & DRM_RDWR);
		/* Imported back into its own file: the same handle. */
		im.handle = 0;
		if (!nt_ioctl(c->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &im) &&
		    im.handle != ex.handle && !c->lenient)
			unexpected(c, "self-import gave another handle", im.handle);
		if (chance(&c->r, 50))
			nt_bo_close(c->fd2, im.handle);	/* else at close */
	}
	close(ex.fd);
}

/* ---- the rest ---- */

static void op_get_param(struct ctx *c, bool mutate)
{
	struct drm_neuron_get_param g = {
		.param = (uint32_t)below(&c->r, DRM_NEURON_PARAM_MAX_PINNED + 1),
	};
	int ret;

	if (mutate) {
		if (chance(&c->r, 50))
			g.param = (uint32_t)wild(&c->r);
		else
			g.pad = (uint32_t)wild(&c->r);
	}
	ret = nt_ioctl(c->fd, DRM_IOCTL_NEURON_GET_PARAM, &g);
	if (mutate)
		mutated(c, "GET_PARAM (mutated)", ret);
	else
		expect(c, "GET_PARAM", ret, NULL);
}

/*
 * Noise through the driver's ioctl numbers, any direction and size. The
 * driver only reads through user pointers, so noise that happens to name
 * memory of ours is harmless.
 */
static void op_noise(struct ctx *c)
{
	uint64_t buf[40];
	unsigned long req;
	unsigned int size = (unsigned int)below(&c->r, sizeof(buf) + 1);

	for (size_t i = 0; i < sizeof(buf) / sizeof(buf[0]); i++)
		buf[i] = chance(&c->r, 50) ? wild(&c->r) : below(&c->r, 8);
	/* Waits of noise: keep them short. */
	req = _IOC((unsigned int)below(&c->r, 4), DRM_IOCTL_BASE,
		   DRM_COMMAND_BASE + (unsigned int)below(&c->r, 16), size);
	if ((req & 0xff) == DRM_COMMAND_BASE + DRM_NEURON_WAIT)
		buf[2] = below(&c->r, 1000000);
	mutated(c, "noise ioctl", ioctl(c->fd, req, buf) ? -errno : 0);
}

static void run_ops(struct ctx *c, unsigned long nops)
{
	for (c->op = 0; c->op < nops; c->op++) {
		bool m = chance(&c->r, 30);

		switch (below(&c->r, 16)) {
		case 0: case 1: op_bo_create(c, m); break;
		case 2: op_bo_close(c, m); break;
		case 3: op_bo_info(c, m); break;
		case 4: op_mmap(c, m); break;
		case 5: op_touch_or_unmap(c); break;
		case 6: case 7: op_syncobj(c, m); break;
		case 8: case 9: case 10: op_submit_dma(c, m); break;
		case 11: op_submit_core(c, m); break;
		case 12: op_wait(c, m); break;
		case 13: op_prime(c, m); break;
		case 14: chance(&c->r, 50) ? op_get_param(c, m) : op_noise(c); break;
		default: op_roundtrip(c); break;
		}
	}
}

/* A child: its own files on the card (or, now and then, the parent's). */
static int child(uint64_t seed, int parent_fd, const int shared_fd[2],
		 unsigned long nops)
{
	struct ctx c = { .r = { seed } };
	struct nisa_insn *k;
	uint64_t sz;

	c.lenient = chance(&c.r, 15);
	c.fd = c.lenient ? parent_fd : nt_open();
	c.fd2 = nt_open();
	if (c.fd < 0 || c.fd2 < 0)
		return 2;
	c.shared_fd[0] = shared_fd[0];
	c.shared_fd[1] = shared_fd[1];
	nt_param(c.fd, DRM_NEURON_PARAM_NUM_DMA_QUEUES, &c.ndma);
	if (nt_param(c.fd, DRM_NEURON_PARAM_CAPABILITIES, &sz) || !(sz & DRM_NEURON_CAP_COMPUTE) ||
	    nt_param(c.fd, DRM_NEURON_PARAM_NUM_CORES, &c.ncores))
		c.ncores = 0;
	/* Device memory may be full (of other children's buffers): no kernels then. */
	if (!nt_bo_create(c.fd, KBO_SIZE, DRM_NEURON_BO_DEVICE, &c.kbo)) {
		k = nt_bo_map(c.fd, c.kbo, &sz);
		if (!k)
			return 2;
		for (size_t i = 0; i < KBO_SIZE / sizeof(uint64_t); i++)
			((uint64_t *)k)[i] = i < KBO_NOPS * sizeof(*k) / sizeof(uint64_t) ? 0 :
					     rnd(&c.r) & 0xffff000fffff00ffULL;
		munmap(k, sz);
	}
	run_ops(&c, nops);
	return c.bad ? 1 : 0;
}

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

static long long taint(void)
{
	return nt_read_number("/proc/sys/kernel/tainted");
}

/* A counter of the card by its minor, with no file of ours open. */
static long long counter(int minor, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/neuron/%s",
		 minor, name);
	return nt_read_number(path);
}

FIXTURE(fuzz) {
	int fd;
};

FIXTURE_SETUP(fuzz)
{
	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	NT_NEED_CARD_ALONE(self->fd);
}

FIXTURE_TEARDOWN(fuzz)
{
	if (self->fd >= 0)
		close(self->fd);
}

struct running {
	pid_t pid;
	uint64_t seed;
	double kill_at;		/* ms, 0: let it finish */
};

/* Wait for one child, or kill it when its time comes; 1 if it failed. */
static int reap(struct __test_metadata *_metadata, struct running *r, bool block)
{
	int status;
	pid_t p;

	if (r->kill_at && nt_now_ms() >= r->kill_at) {
		kill(r->pid, SIGKILL);
		r->kill_at = 0;
	}
	p = waitpid(r->pid, &status, block ? 0 : WNOHANG);
	if (p == 0)
		return -1;
	r->pid = 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	TH_LOG("child with seed 0x%016llx failed: %s %d", (unsigned long long)r->seed,
	       WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 1;
}

TEST_F_TIMEOUT(fuzz, mixed_calls_kills_and_sharing, 1200)
{
	uint64_t seed = env_ul("NEURON_FUZZ_SEED", 0);
	unsigned long iters = env_ul("NEURON_FUZZ_ITERS", 200);
	unsigned long seconds = env_ul("NEURON_FUZZ_SECONDS", 20);
	unsigned long nops = env_ul("NEURON_FUZZ_OPS", 150);
	unsigned long nprocs = env_ul("NEURON_FUZZ_PROCS", 2);
	int minor = nt_minor(self->fd), shared_fd[2] = { -1, -1 }, failed = 0;
	long long bos, jobs, pinned, used, taint0 = taint();
	struct running run[8] = { 0 };
	unsigned long started = 0;
	uint32_t shared[2];
	struct rng r;
	double end;

	if (!getenv("NEURON_FUZZ_SEED"))
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (nprocs < 1 || nprocs > 8)
		nprocs = 2;
	r.s = seed;
	TH_LOG("seed 0x%016llx: replay with NEURON_FUZZ_SEED=0x%016llx "
	       "NEURON_FUZZ_ITERS=%lu NEURON_FUZZ_OPS=%lu NEURON_FUZZ_PROCS=%lu",
	       (unsigned long long)seed, (unsigned long long)seed, iters, nops, nprocs);
	bos = counter(minor, "bos");
	jobs = counter(minor, "jobs");
	pinned = counter(minor, "pinned");
	used = counter(minor, "mem_used");
	ASSERT_GE(bos, 0);

	/* Buffers of this process, shared with every child as dma-bufs. */
	for (int i = 0; i < 2; i++) {
		struct drm_prime_handle ex = { .flags = DRM_CLOEXEC | DRM_RDWR };

		ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 20, i ? DRM_NEURON_BO_HOST :
					  DRM_NEURON_BO_DEVICE, &shared[i]));
		ex.handle = shared[i];
		ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ex));
		/* Inherited across fork, not exec. */
		ASSERT_EQ(0, fcntl(ex.fd, F_SETFD, 0));
		shared_fd[i] = ex.fd;
	}

	end = nt_now_ms() + seconds * 1000.0;
	for (;;) {
		bool more = (!iters || started < iters) && nt_now_ms() < end;
		int alive = 0;

		for (unsigned long i = 0; i < nprocs; i++) {
			if (run[i].pid) {
				int ret = reap(_metadata, &run[i], false);

				failed += ret > 0;
				alive += ret < 0;
			}
			if (!run[i].pid && more) {
				uint64_t cseed = rnd(&r);
				/* Half are killed, 0-150 ms in: mid-submit, mid-pin, mid-wait. */
				bool kill_it = chance(&r, 50);
				double delay = (double)below(&r, 150);
				pid_t pid = fork();

				ASSERT_LE(0, pid);
				if (!pid)
					_exit(child(cseed, self->fd, shared_fd, nops));
				run[i] = (struct running){ pid, cseed,
							   kill_it ? nt_now_ms() + delay : 0 };
				started++;
				alive++;
				/*
				 * What children leave in the shared file stays
				 * until it is closed: start a fresh one now and
				 * then (the old one goes with its last child).
				 */
				if (!(started % 16)) {
					close(self->fd);
					self->fd = nt_open();
					ASSERT_LE(0, self->fd);
				}
				more = (!iters || started < iters) && nt_now_ms() < end;
			}
		}
		if (!alive && !more)
			break;
		usleep(2000);
	}
	TH_LOG("%lu children, %d failed", started, failed);
	EXPECT_EQ(0, failed);

	for (int i = 0; i < 2; i++) {
		close(shared_fd[i]);
		nt_bo_close(self->fd, shared[i]);
	}
	close(self->fd);
	self->fd = -1;
	/* Everything closed: the card is as it was once its jobs are freed. */
	for (int i = 0; i < 1000 && (counter(minor, "jobs") != jobs ||
				     counter(minor, "bos") != bos ||
				     counter(minor, "pinned") != pinned); i++)
		usleep(10000);
	EXPECT_EQ(jobs, counter(minor, "jobs"));
	EXPECT_EQ(bos, counter(minor, "bos"));
	EXPECT_EQ(pinned, counter(minor, "pinned"));
	EXPECT_EQ(used, counter(minor, "mem_used"));
	EXPECT_EQ(taint0 & TAINT_WARN, taint() & TAINT_WARN);
}

TEST_HARNESS_MAIN
