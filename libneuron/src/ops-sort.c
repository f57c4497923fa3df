// SPDX-License-Identifier: MIT
/* Sort and scan along an axis (NISA_INSN_SORT, NISA_INSN_SCAN). */
#include <errno.h>
#include <stdint.h>

#include "internal.h"

/*
 * dst, src and (if set) indices of one shape, at most NISA_MAX_DIMS dims;
 * at most @max_len elements along the axis.
 */
static int nrn_lane_op(struct nrn_stream *s, struct nisa_insn *in,
		       const struct nrn_tensor_desc *dst,
		       const struct nrn_tensor_desc *indices,
		       const struct nrn_tensor_desc *src, int64_t max_len)
{
	const struct nrn_tensor_desc *ts[3] = { dst, src, indices };
	const uint32_t access[3] = { NISA_ACCESS_WRITE, NISA_ACCESS_READ,
				     NISA_ACCESS_WRITE };
	unsigned int n = indices ? 3 : 2;
	int axis = in->axis;

	if (!s || !dst || !src || dst->ndim != src->ndim || dst->dtype != src->dtype)
		return -EINVAL;
	if (indices && (indices->ndim != src->ndim ||
			(indices->dtype != NISA_I32 && indices->dtype != NISA_I64)))
		return -EINVAL;
	for (unsigned int d = 0; d < src->ndim && d < NRN_TENSOR_MAX_DIMS; d++)
		if (dst->shape[d] != src->shape[d] ||
		    (indices && indices->shape[d] != src->shape[d]))
			return -EINVAL;
	if (axis < -(int)(src->ndim ? src->ndim : 1) ||
	    axis >= (int)(src->ndim ? src->ndim : 1))
		return -EINVAL;
	if (src->ndim && src->ndim <= NRN_TENSOR_MAX_DIMS &&
	    src->shape[axis < 0 ? axis + (int)src->ndim : axis] > max_len)
		return -E2BIG;
	if (indices)
		in->flags |= NISA_IF_INDICES;
	return nrn_emit_plain(s, in, ts, access, n);
}

NRN_EXPORT int nrn_op_sort(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			   const struct nrn_tensor_desc *indices,
			   const struct nrn_tensor_desc *src, int axis, int descending)
{
	struct nisa_insn in = { .opcode = NISA_INSN_SORT, .axis = axis,
			       .flags = descending ? NISA_IF_DESCENDING : 0 };

	return nrn_lane_op(s, &in, dst, indices, src, NISA_SORT_MAX_LEN);
}

NRN_EXPORT int nrn_op_scan(struct nrn_stream *s, enum nisa_scan op,
			   const struct nrn_tensor_desc *dst,
			   const struct nrn_tensor_desc *indices,
			   const struct nrn_tensor_desc *src, int axis)
{
	struct nisa_insn in = { .opcode = NISA_INSN_SCAN, .subop = (uint16_t)op,
			       .axis = axis };

	if ((unsigned int)op >= NISA_NUM_SCAN ||
	    (indices && op != NISA_SCAN_MAX && op != NISA_SCAN_MIN))
		return -EINVAL;
	return nrn_lane_op(s, &in, dst, indices, src, INT64_MAX);
}
