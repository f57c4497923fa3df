// SPDX-License-Identifier: MIT
/* The reducing scatter (NISA_INSN_SCATTER): index_copy/index_reduce/scatter. */
#include <errno.h>

#include "internal.h"

NRN_EXPORT int nrn_op_scatter(struct nrn_stream *s, enum nisa_scatter red,
			      enum nisa_index_mode mode,
			      const struct nrn_tensor_desc *dst,
			      const struct nrn_tensor_desc *src,
			      const struct nrn_tensor_desc *index, int axis)
{
	const struct nrn_tensor_desc *ts[3] = { dst, src, index };
	const uint32_t access[3] = { NISA_ACCESS_READ | NISA_ACCESS_WRITE,
				     NISA_ACCESS_READ, NISA_ACCESS_READ };
	struct nisa_insn in = { .opcode = NISA_INSN_SCATTER, .axis = axis };

	if (!s || !dst || !src || !index || (unsigned int)red >= NISA_NUM_SCATTER ||
	    (unsigned int)mode >= NISA_NUM_IDX)
		return -EINVAL;
	if (index->dtype != NISA_I32 && index->dtype != NISA_I64)
		return -EINVAL;
	in.subop = NISA_SCATTER_SUBOP(red, mode);
	return nrn_emit_indexed(s, &in, ts, access);
}
