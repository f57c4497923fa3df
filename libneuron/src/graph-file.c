// SPDX-License-Identifier: MIT
/*
 * The compiled-graph format (little-endian, as the card):
 *
 *   struct nrn_graph_file   header: magic, format, ISA version, length,
 *                           checksum, counts, arena and constants' sizes
 *   nargs  * struct nrn_graph_argi     the arguments
 *   ninsns * struct nrn_graph_op       each instruction's operand bases
 *   ninsns * struct nisa_insn          the instructions
 *   ninsns * uint32_t                  each instruction's origin: the
 *                                      captured instruction it came from
 *   const_size bytes                   the constants
 *
 * Format 2 added the origins; a format 1 blob is -EBADMSG like any other
 * version's (a cache recompiles it).
 *
 * The checksum is FNV-1a 64 over the whole blob with the checksum field
 * zero. Anything wrong -- magic, versions, length, checksum, contents
 * (nrn_graph_validate) -- is -EBADMSG: a cache entry from another build or
 * a damaged file is never loaded.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define NRN_GRAPH_MAGIC "NRNGRPH"	/* 8 bytes with its NUL */
#define NRN_GRAPH_FORMAT 2

struct nrn_graph_file {
	char magic[8];
	uint32_t format;
	uint32_t isa_version;
	uint64_t length;
	uint64_t checksum;
	uint32_t nargs;
	uint32_t ninsns;
	uint32_t captured;
	uint32_t fused;
	uint64_t arena_size;
	uint64_t const_size;
};

_Static_assert(sizeof(struct nrn_graph_file) == 64, "graph file header");
_Static_assert(sizeof(struct nrn_graph_argi) == 24, "graph argument");
_Static_assert(sizeof(struct nrn_graph_op) == 32, "graph operands");

static uint64_t nrn_graph_fnv(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t skip = offsetof(struct nrn_graph_file, checksum);

	for (size_t i = 0; i < n; i++) {
		/* The checksum field counts as zero. */
		unsigned char b = i >= skip && i < skip + 8 ? 0 : p[i];

		h ^= b;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The blob's length for these counts; 0 if it would overflow. */
static uint64_t nrn_graph_file_len(uint64_t nargs, uint64_t ninsns, uint64_t cs)
{
	uint64_t len = sizeof(struct nrn_graph_file);

	if (nargs > (1u << 20) || ninsns > (1u << 24) || cs > (1ull << 40))
		return 0;
	len += nargs * sizeof(struct nrn_graph_argi);
	len += ninsns * (sizeof(struct nrn_graph_op) + sizeof(struct nisa_insn) +
			 sizeof(uint32_t));
	return len + cs;
}

NRN_EXPORT int nrn_graph_serialize(const struct nrn_graph *g, void **bufp, size_t *lenp)
{
	uint64_t len;
	struct nrn_graph_file h;
	unsigned char *buf, *p;

	if (!g || !bufp || !lenp)
		return -EINVAL;
	len = nrn_graph_file_len(g->nargs, g->ninsns, g->const_size);
	if (!len || len > SIZE_MAX)
		return -E2BIG;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	h = (struct nrn_graph_file){
		.magic = NRN_GRAPH_MAGIC, .format = NRN_GRAPH_FORMAT,
		.isa_version = NISA_ISA_VERSION, .length = len, .nargs = g->nargs,
		.ninsns = g->ninsns, .captured = g->captured, .fused = g->fused,
		.arena_size = g->arena_size, .const_size = g->const_size,
	};
	p = buf + sizeof(h);
	memcpy(p, g->args, g->nargs * sizeof(*g->args));
	p += g->nargs * sizeof(*g->args);
	memcpy(p, g->ops, g->ninsns * sizeof(*g->ops));
	p += g->ninsns * sizeof(*g->ops);
	memcpy(p, g->insns, g->ninsns * sizeof(*g->insns));
	p += g->ninsns * sizeof(*g->insns);
	memcpy(p, g->origins->idx, g->ninsns * sizeof(uint32_t));
	p += g->ninsns * sizeof(uint32_t);
	if (g->const_size)
		memcpy(p, g->consts, g->const_size);
	memcpy(buf, &h, sizeof(h));
	h.checksum = nrn_graph_fnv(buf, len);
	memcpy(buf, &h, sizeof(h));
	*bufp = buf;
	*lenp = len;
	return 0;
}

NRN_EXPORT int nrn_graph_deserialize(const void *buf, size_t len, struct nrn_graph **gp)
{
	const unsigned char *p = buf;
	struct nrn_graph_file h;
	struct nrn_graph *g;
	int ret;

	if (!buf || !gp)
		return -EINVAL;
	*gp = NULL;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, NRN_GRAPH_MAGIC, sizeof(h.magic)) ||
	    h.format != NRN_GRAPH_FORMAT || h.isa_version != NISA_ISA_VERSION ||
	    h.length != len || nrn_graph_file_len(h.nargs, h.ninsns, h.const_size) != len ||
	    h.fused > h.captured)
		return -EBADMSG;
	if (nrn_graph_fnv(p, len) != h.checksum)
		return -EBADMSG;
	g = nrn_graph_alloc(h.nargs, h.ninsns, h.const_size);
	if (!g)
		return -ENOMEM;
	g->captured = h.captured;
	g->fused = h.fused;
	g->arena_size = h.arena_size;
	p += sizeof(h);
	memcpy(g->args, p, h.nargs * sizeof(*g->args));
	p += h.nargs * sizeof(*g->args);
	memcpy(g->ops, p, h.ninsns * sizeof(*g->ops));
	p += h.ninsns * sizeof(*g->ops);
	memcpy(g->insns, p, h.ninsns * sizeof(*g->insns));
	p += h.ninsns * sizeof(*g->insns);
	memcpy(g->origins->idx, p, h.ninsns * sizeof(uint32_t));
	p += h.ninsns * sizeof(uint32_t);
	if (h.const_size)
		memcpy(g->consts, p, h.const_size);
	ret = nrn_graph_validate(g);
	if (ret) {
		nrn_graph_destroy(g);
		return ret;
	}
	*gp = g;
	return 0;
}
