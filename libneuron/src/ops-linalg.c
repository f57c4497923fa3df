// SPDX-License-Identifier: MIT
/*
 * Dense linear algebra (NISA_INSN_LINALG): one instruction per call, its
 * operands as given (docs/hardware.md, "LINALG", says what each subop
 * reads and writes). Which sources the card writes depends on the subop
 * and flags: those are bound with write access.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Sources read (R) and written (W) per subop; unused ones are NULL. */
enum { N_ = 0, R_ = NISA_ACCESS_READ, W_ = NISA_ACCESS_WRITE };

static const uint8_t nrn_linalg_roles[NISA_NUM_LINALG][3] = {
	[NISA_LA_POTRF] = { R_, W_, N_ },
	[NISA_LA_GETRF] = { R_, W_, W_ },
	[NISA_LA_GETRS] = { R_, R_, R_ },
	[NISA_LA_TRSM] = { R_, R_, N_ },
	[NISA_LA_GEQRF] = { R_, W_, N_ },
	[NISA_LA_ORGQR] = { R_, R_, N_ },
	[NISA_LA_ORMQR] = { R_, R_, R_ },
	[NISA_LA_GESDD] = { R_, W_, W_ },
	[NISA_LA_SYEVD] = { R_, W_, N_ },
	[NISA_LA_LUDET] = { R_, R_, W_ },
	[NISA_LA_PERM] = { R_, N_, N_ },
	[NISA_LA_SYTRF] = { R_, W_, W_ },
	[NISA_LA_SYTRS] = { R_, R_, R_ },
	[NISA_LA_GELS] = { R_, R_, N_ },
	[NISA_LA_GELSY] = { R_, R_, W_ },
};

static uint8_t nrn_linalg_role(enum nisa_linalg op, uint32_t flags, unsigned int i)
{
	if ((op == NISA_LA_GESDD && i && (flags & NISA_IF_LA_NOVEC)) ||
	    (op == NISA_LA_SYEVD && i == 1 && (flags & NISA_IF_LA_NOVEC)) ||
	    (op == NISA_LA_LUDET && i == 2 && !(flags & NISA_IF_LA_LOG)))
		return N_;
	return nrn_linalg_roles[op][i];
}

NRN_EXPORT int nrn_op_linalg(struct nrn_stream *s, enum nisa_linalg op,
			     uint32_t flags, double scalar,
			     const struct nrn_tensor_desc *dst,
			     const struct nrn_tensor_desc *src0,
			     const struct nrn_tensor_desc *src1,
			     const struct nrn_tensor_desc *src2)
{
	const struct nrn_tensor_desc *srcs[3] = { src0, src1, src2 };
	const struct nrn_tensor_desc *ts[4] = { dst };
	uint32_t access[4] = { NISA_ACCESS_WRITE };
	struct nisa_insn in = { .opcode = NISA_INSN_LINALG, .subop = (uint16_t)op,
			       .flags = flags };
	unsigned int n = 1;

	memcpy(&in.scalar, &scalar, sizeof(in.scalar));

	if (!s || !dst || (unsigned int)op >= NISA_NUM_LINALG)
		return -EINVAL;
	for (unsigned int i = 0; i < 3; i++) {
		uint8_t role = nrn_linalg_role(op, flags, i);

		if (!role != !srcs[i])
			return -EINVAL;	/* a source missing, or one too many */
		if (!role)
			continue;
		if (n != i + 1)
			return -EINVAL;	/* the used sources come first */
		ts[n] = srcs[i];
		access[n++] = role;
	}
	return nrn_emit_plain(s, &in, ts, access, n);
}
