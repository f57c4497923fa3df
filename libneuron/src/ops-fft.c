// SPDX-License-Identifier: MIT
/*
 * NISA_INSN_FFT: a discrete Fourier transform along one axis, batched over
 * the others (docs/hardware.md, "FFT").
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static uint64_t nrn_fft_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/* The operands' dtypes and extents along @ax, as @op wants them. */
static int nrn_fft_check(enum nisa_fft op, const struct nrn_tensor_desc *dst,
			 const struct nrn_tensor_desc *src, unsigned int ax)
{
	int64_t n = op == NISA_FFT_C2R ? dst->shape[ax] : src->shape[ax];
	int64_t half = n / 2 + 1;

	if (n > NISA_FFT_MAX_LEN)
		return -E2BIG;
	for (unsigned int d = 0; d < src->ndim; d++)
		if (d != ax && dst->shape[d] != src->shape[d])
			return -EINVAL;
	switch (op) {
	case NISA_FFT_FORWARD:
	case NISA_FFT_BACKWARD:
		return dst->dtype == NISA_C64 && src->dtype == NISA_C64 &&
		       dst->shape[ax] == n ? 0 : -EINVAL;
	case NISA_FFT_R2C:
		return dst->dtype == NISA_C64 && src->dtype == NISA_F32 &&
		       (dst->shape[ax] == half || dst->shape[ax] == n) ? 0 : -EINVAL;
	case NISA_FFT_C2R:
		return dst->dtype == NISA_F32 && src->dtype == NISA_C64 &&
		       (!n || src->shape[ax] >= half) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

NRN_EXPORT int nrn_op_fft(struct nrn_stream *s, enum nisa_fft op,
			  const struct nrn_tensor_desc *dst,
			  const struct nrn_tensor_desc *src, int axis, double scale)
{
	const struct nrn_tensor_desc *ts[2] = { dst, src };
	const uint32_t access[2] = { NISA_ACCESS_WRITE, NISA_ACCESS_READ };
	struct nisa_insn in = { .opcode = NISA_INSN_FFT, .subop = (uint16_t)op,
			       .scalar = nrn_fft_bits(scale) };
	int nd, ret;

	if (!s || !dst || !src || (unsigned int)op >= NISA_NUM_FFT ||
	    dst->ndim != src->ndim || !src->ndim)
		return -EINVAL;
	if (src->ndim > NISA_MAX_DIMS)
		return -E2BIG;
	nd = (int)src->ndim;
	if (axis < -nd || axis >= nd)
		return -EINVAL;
	in.axis = axis < 0 ? axis + nd : axis;
	ret = nrn_fft_check(op, dst, src, (unsigned int)in.axis);
	if (ret)
		return ret;
	/* An empty dst: nothing to compute (an empty src gives zeros: C2R of n > 0). */
	return nrn_emit_plain_if(s, &in, ts, access, 2, 1u << 0);
}
