// SPDX-License-Identifier: MIT
/*
 * Compiled kernels: an instruction list with its slot count, built one
 * instruction at a time, and its serialized form:
 *
 *   struct nrn_kernel_file (little-endian), then count * struct nisa_insn.
 *
 * The checksum is FNV-1a 64 over the instructions; loading checks the
 * magic, the format and ISA versions, the sizes and the checksum.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define NRN_KERNEL_MAGIC "NRNKERN"	/* 8 bytes with its NUL */
#define NRN_KERNEL_FORMAT 1

struct nrn_kernel_file {
	char magic[8];
	uint32_t format;
	uint32_t isa_version;
	uint32_t nslots;
	uint32_t count;
	uint64_t checksum;
	uint64_t reserved;
};

_Static_assert(sizeof(struct nrn_kernel_file) == 40, "kernel file header");

static uint64_t nrn_fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

int nrn_kernel_init(struct nrn_kernel *k, unsigned int nslots)
{
	memset(k, 0, sizeof(*k));
	k->nslots = nslots;
	return 0;
}

void nrn_kernel_fini(struct nrn_kernel *k)
{
	free(k->insns);
	k->insns = NULL;
}

int nrn_kernel_push(struct nrn_kernel *k, const struct nisa_insn *insn)
{
	if (k->count == k->cap) {
		unsigned int cap = k->cap ? 2 * k->cap : 64;
		struct nisa_insn *n;

		if (cap > NISA_MAX_INSNS)
			cap = NISA_MAX_INSNS;
		if (k->count == cap)
			return -E2BIG;
		n = realloc(k->insns, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		k->insns = n;
		k->cap = cap;
	}
	k->insns[k->count++] = *insn;
	return 0;
}

NRN_EXPORT int nrn_kernel_create(unsigned int nslots, struct nrn_kernel **kp)
{
	struct nrn_kernel *k;

	if (!kp || nslots > DRM_NEURON_MAX_BOS)
		return -EINVAL;
	k = malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	nrn_kernel_init(k, nslots);
	*kp = k;
	return 0;
}

NRN_EXPORT void nrn_kernel_destroy(struct nrn_kernel *k)
{
	if (!k)
		return;
	nrn_kernel_fini(k);
	free(k);
}

/* The slots an instruction's tensors name must exist. */
static int nrn_insn_check_slots(const struct nrn_kernel *k,
				const struct nisa_insn *insn)
{
	if (insn->opcode >= NISA_NUM_OPCODES)
		return -EINVAL;
	if (insn->opcode == NISA_INSN_NOP)
		return 0;
	if (insn->dst.slot >= k->nslots)
		return -EINVAL;
	/* An EXPR's STEPS continuation holds steps where sources would be. */
	if (insn->opcode == NISA_INSN_EXPR_DATA && insn->subop == NISA_EXPR_DATA_STEPS)
		return 0;
	for (unsigned int i = 0; i < 3; i++)
		if (insn->src[i].ndim && insn->src[i].slot >= k->nslots)
			return -EINVAL;
	return 0;
}

NRN_EXPORT int nrn_kernel_append(struct nrn_kernel *k,
				 const struct nisa_insn *insn)
{
	int ret;

	if (!k || !insn)
		return -EINVAL;
	ret = nrn_insn_check_slots(k, insn);
	return ret ? ret : nrn_kernel_push(k, insn);
}

NRN_EXPORT unsigned int nrn_kernel_count(const struct nrn_kernel *k)
{
	return k->count;
}

NRN_EXPORT unsigned int nrn_kernel_slots(const struct nrn_kernel *k)
{
	return k->nslots;
}

NRN_EXPORT const struct nisa_insn *nrn_kernel_insns(const struct nrn_kernel *k)
{
	return k->insns;
}

NRN_EXPORT int nrn_kernel_serialize(const struct nrn_kernel *k, void **bufp,
				    size_t *lenp)
{
	size_t body = (size_t)k->count * sizeof(struct nisa_insn);
	struct nrn_kernel_file h = {
		.magic = NRN_KERNEL_MAGIC, .format = NRN_KERNEL_FORMAT,
		.isa_version = NISA_ISA_VERSION, .nslots = k->nslots,
		.count = k->count, .checksum = nrn_fnv1a(k->insns, body),
	};
	char *buf;

	buf = malloc(sizeof(h) + body);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	if (body)
		memcpy(buf + sizeof(h), k->insns, body);
	*bufp = buf;
	*lenp = sizeof(h) + body;
	return 0;
}

NRN_EXPORT int nrn_kernel_deserialize(const void *buf, size_t len,
				      struct nrn_kernel **kp)
{
	struct nrn_kernel_file h;
	struct nrn_kernel *k;
	size_t body;
	int ret;

	if (!buf || len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, NRN_KERNEL_MAGIC, sizeof(h.magic)))
		return -EINVAL;
	if (h.format != NRN_KERNEL_FORMAT || h.isa_version != NISA_ISA_VERSION)
		return -ENOTSUP;
	if (h.count > NISA_MAX_INSNS || h.nslots > DRM_NEURON_MAX_BOS || h.reserved)
		return -EINVAL;
	body = (size_t)h.count * sizeof(struct nisa_insn);
	if (len != sizeof(h) + body)
		return -EINVAL;
	if (nrn_fnv1a((const char *)buf + sizeof(h), body) != h.checksum)
		return -EBADMSG;
	ret = nrn_kernel_create(h.nslots, &k);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < h.count; i++) {
		struct nisa_insn insn;

		memcpy(&insn, (const char *)buf + sizeof(h) + i * sizeof(insn),
		       sizeof(insn));
		ret = nrn_kernel_append(k, &insn);
		if (ret) {
			nrn_kernel_destroy(k);
			return ret;
		}
	}
	*kp = k;
	return 0;
}

NRN_EXPORT int nrn_kernel_save(const struct nrn_kernel *k, const char *path)
{
	size_t len;
	void *buf;
	FILE *f;
	int ret;

	ret = nrn_kernel_serialize(k, &buf, &len);
	if (ret)
		return ret;
	f = fopen(path, "wb");
	if (!f) {
		ret = -errno;
		free(buf);
		return ret;
	}
	if (fwrite(buf, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	free(buf);
	return ret;
}

NRN_EXPORT int nrn_kernel_load(const char *path, struct nrn_kernel **kp)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	if (!f)
		return -errno;
	do {
		if (len == cap) {
			char *b;

			cap = cap ? 2 * cap : 1 << 16;
			b = realloc(buf, cap);
			if (!b) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = b;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	ret = ferror(f) ? -EIO : nrn_kernel_deserialize(buf, len, kp);
	fclose(f);
	free(buf);
	return ret;
}

NRN_EXPORT int nrn_kernel_launch(struct nrn_stream *s, const struct nrn_kernel *k,
				 struct nrn_buffer *const *bufs,
				 const uint32_t *access)
{
	struct drm_neuron_bo_ref refs[DRM_NEURON_MAX_BOS];
	size_t len, off;
	struct drm_neuron_submit submit = { .engine = DRM_NEURON_ENGINE_CORE };
	int ret;

	if (!s || !k || !k->count || (k->nslots && (!bufs || !access)))
		return -EINVAL;
	for (unsigned int i = 0; i < k->nslots; i++) {
		if (!bufs[i] || bufs[i]->dev != s->dev || bufs[i]->mem != NRN_MEM_DEVICE ||
		    !access[i] || access[i] & ~(NISA_ACCESS_READ | NISA_ACCESS_WRITE))
			return -EINVAL;
		refs[i] = (struct drm_neuron_bo_ref){ .handle = bufs[i]->handle,
						      .access = access[i] };
	}
	len = (size_t)k->count * sizeof(struct nisa_insn);
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	if (s->capture) {
		ret = nrn_capture_kernel(s->capture, k, bufs, access);
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	/* Batched operations come first, in issue order. */
	ret = nrn_stream_flush_locked(s);
	if (!ret)
		ret = nrn_ring_alloc_locked(s, &s->code, len, 64, &off);
	if (!ret) {
		memcpy(s->code.map + off, k->insns, len);
		submit.index = s->core;
		submit.kernel_handle = s->code.buf->handle;
		submit.kernel_offset = off;
		submit.kernel_size = len;
		submit.bos = (uintptr_t)refs;
		submit.bo_count = k->nslots;
		nrn_ring_commit_locked(s, &s->code, off, len);
		ret = nrn_stream_submit_locked(s, &submit);
		if (ret)
			s->code.count--;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}
