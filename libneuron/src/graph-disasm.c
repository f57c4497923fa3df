// SPDX-License-Identifier: MIT
/*
 * A compiled graph as text, one launch instruction at a time (what
 * neuron-objdump prints for a graph file): the instruction as
 * nrn_insn_format() writes it -- its operands' slot fields mean nothing
 * in a graph, their offsets are relative to their base -- followed by each
 * used operand's base (an argument, the arena or the constants) and the
 * captured instruction it was compiled from.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "internal.h"

static const char *const opnd_names[NRN_GRAPH_OPNDS] = { "dst", "src0", "src1", "src2" };

NRN_EXPORT int nrn_graph_insn_format(const struct nrn_graph *g, unsigned int i, char *out,
				     size_t size)
{
	const struct nrn_graph_op *op;
	size_t len;
	int ret;

	if (!g || !out || !size || i >= g->ninsns)
		return -EINVAL;
	ret = nrn_insn_format(&g->insns[i], out, size);
	if (ret)
		return ret;
	op = &g->ops[i];
	for (unsigned int k = 0; k < NRN_GRAPH_OPNDS; k++) {
		uint32_t b = op->base[k];
		int n;

		len = strlen(out);
		if (b == NRN_GRAPH_NONE)
			continue;
		if (b == NRN_GRAPH_BASE_ARENA)
			n = snprintf(out + len, size - len, " %s@arena", opnd_names[k]);
		else if (b == NRN_GRAPH_BASE_CONST)
			n = snprintf(out + len, size - len, " %s@const", opnd_names[k]);
		else
			n = snprintf(out + len, size - len, " %s@arg%u", opnd_names[k], b);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
	}
	if (g->origins && i < g->origins->n) {
		int n;

		len = strlen(out);
		n = snprintf(out + len, size - len, " <- captured %u", g->origins->idx[i]);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
	}
	return 0;
}
