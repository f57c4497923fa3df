// SPDX-License-Identifier: MIT
/* Instructions and device error codes as text (neuron-objdump, messages). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Every name comes from the ISA's tables (isa/neuron_isa.h). */
#define NRN_NAME_(NAME, name, ...) #name,
static const char *const nrn_opcode_names[NISA_NUM_OPCODES] = {
	NISA_OPCODES(NRN_NAME_)
};
static const char *const nrn_unary_names[NISA_NUM_UNARY] = {
	NISA_UNARY_OPS(NRN_NAME_)
};
static const char *const nrn_binary_names[NISA_NUM_BINARY] = {
	NISA_BINARY_OPS(NRN_NAME_)
};
static const char *const nrn_compare_names[NISA_NUM_COMPARE] = {
	NISA_COMPARE_OPS(NRN_NAME_)
};
static const char *const nrn_reduce_names[NISA_NUM_REDUCE] = {
	NISA_REDUCE_OPS(NRN_NAME_)
};
static const char *const nrn_softmax_names[NISA_NUM_SOFTMAX] = {
	NISA_SOFTMAX_OPS(NRN_NAME_)
};
static const char *const nrn_index_names[NISA_NUM_IDX] = { NISA_INDEX_OPS(NRN_NAME_) };
static const char *const nrn_random_names[NISA_NUM_RANDOM] = {
	NISA_RANDOM_OPS(NRN_NAME_)
};
static const char *const nrn_scan_names[NISA_NUM_SCAN] = { NISA_SCAN_OPS(NRN_NAME_) };
static const char *const nrn_scatter_names[NISA_NUM_SCATTER] = {
	NISA_SCATTER_OPS(NRN_NAME_)
};
static const char *const nrn_linalg_names[NISA_NUM_LINALG] = {
	NISA_LINALG_OPS(NRN_NAME_)
};
static const char *const nrn_fft_names[NISA_NUM_FFT] = { NISA_FFT_OPS(NRN_NAME_) };
static const char *const nrn_expr_data_names[NISA_NUM_EXPR_DATA] = {
	NISA_EXPR_DATA_OPS(NRN_NAME_)
};

/* Appends to a bounded buffer, remembering overflow. */
struct nrn_out {
	char *p;
	size_t left;
	int overflow;
};

static void nrn_put(struct nrn_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->p, o->left, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->left) {
		o->overflow = 1;
		o->p += o->left ? o->left - 1 : 0;
		o->left = o->left ? 1 : 0;
		return;
	}
	o->p += n;
	o->left -= (size_t)n;
}

static void nrn_put_tensor(struct nrn_out *o, const char *name,
			   const struct nisa_tensor *t)
{
	nrn_put(o, " %s=s%u+%llu:%s[", name, t->slot, (unsigned long long)t->offset,
		nisa_dtype_name(t->dtype));
	for (unsigned int d = 0; d < t->ndim && d < NISA_MAX_DIMS; d++)
		nrn_put(o, "%s%u", d ? "," : "", t->shape[d]);
	nrn_put(o, "]/(");
	for (unsigned int d = 0; d < t->ndim && d < NISA_MAX_DIMS; d++)
		nrn_put(o, "%s%lld", d ? "," : "", (long long)t->strides[d]);
	nrn_put(o, ")");
}

/* The name of @in's subop, from its SUBOPS table; NULL if it has none. */
static const char *nrn_subop_name(const struct nisa_insn *in)
{
	const char *const *names = NULL;
	unsigned int n = 0;

	switch (in->opcode) {
#define NRN_SUBOPS_(NAME, name, cls, d, s0, s1, s2, subops)		\
	case NISA_INSN_##NAME:						\
		NRN_SUBOPS_##subops;					\
		break;
#define NRN_SUBOPS_NONE		return NULL
#define NRN_SUBOPS_TABLE(t)	names = t, n = NRN_ARRAY_SIZE(t)
#define NRN_SUBOPS_UNARY	NRN_SUBOPS_TABLE(nrn_unary_names)
#define NRN_SUBOPS_BINARY	NRN_SUBOPS_TABLE(nrn_binary_names)
#define NRN_SUBOPS_COMPARE	NRN_SUBOPS_TABLE(nrn_compare_names)
#define NRN_SUBOPS_REDUCE	NRN_SUBOPS_TABLE(nrn_reduce_names)
#define NRN_SUBOPS_SOFTMAX	NRN_SUBOPS_TABLE(nrn_softmax_names)
#define NRN_SUBOPS_INDEX	NRN_SUBOPS_TABLE(nrn_index_names)
#define NRN_SUBOPS_RANDOM	NRN_SUBOPS_TABLE(nrn_random_names)
#define NRN_SUBOPS_LINALG	NRN_SUBOPS_TABLE(nrn_linalg_names)
#define NRN_SUBOPS_SCAN		NRN_SUBOPS_TABLE(nrn_scan_names)
#define NRN_SUBOPS_EXPR_DATA	NRN_SUBOPS_TABLE(nrn_expr_data_names)
#define NRN_SUBOPS_FFT		NRN_SUBOPS_TABLE(nrn_fft_names)
	/* SCATTER's subop packs a reduction and an index form. */
#define NRN_SUBOPS_SCATTER	return NULL
	NISA_OPCODES(NRN_SUBOPS_)
	default:
		return NULL;
	}
	return in->subop < n ? names[in->subop] : "?";
}


static double nrn_double(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static int nrn_tensor_set(const struct nisa_tensor *t)
{
	static const struct nisa_tensor none;

	return memcmp(t, &none, sizeof(none)) != 0;
}

/* One EXPR step: "r2=binary.add(r0,r1)->f32 alpha=1". */
static void nrn_put_step(struct nrn_out *o, const struct nisa_expr_step *st)
{
	struct nisa_insn as = { .opcode = st->op, .subop = st->subop };
	unsigned int nsrc = 0;
	const char *sub = nrn_subop_name(&as);

	/* A step's sources are the first ones its instruction reads. */
	while (nsrc < 3 && nisa_operand_access(st->op, st->subop, st->flags, 0, nsrc + 1))
		nsrc++;
	nrn_put(o, " r%u=%s", st->dst,
		st->op < NISA_NUM_OPCODES ? nrn_opcode_names[st->op] : "?");
	if (sub)
		nrn_put(o, ".%s", sub);
	nrn_put(o, "(");
	for (unsigned int j = 0; j < nsrc && j < 3; j++)
		nrn_put(o, "%sr%u", j ? "," : "", st->src[j]);
	if (st->op == NISA_INSN_FILL || st->flags & NISA_IF_SCALAR)
		nrn_put(o, "%s%g", nsrc ? "," : "", nrn_double(st->scalar));
	nrn_put(o, ")->%s", nisa_dtype_name(st->dtype));
	if (st->op == NISA_INSN_UNARY && (st->scalar || st->alpha))
		nrn_put(o, " p=%g q=%g", nrn_double(st->scalar), nrn_double(st->alpha));
	if (st->op == NISA_INSN_BINARY &&
	    (st->subop == NISA_BIN_ADD || st->subop == NISA_BIN_SUB))
		nrn_put(o, " alpha=%g", nrn_double(st->alpha));
	if (st->flags & NISA_IF_REVERSE)
		nrn_put(o, " reverse");
	nrn_put(o, ";");
}

/* EXPR: its counts and first operands; EXPR_DATA: its inputs or steps. */
static int nrn_format_expr(const struct nisa_insn *in, struct nrn_out *o)
{
	if (in->opcode == NISA_INSN_EXPR) {
		nrn_put(o, "expr steps=%u inputs=%d", in->subop, in->axis);
		nrn_put_tensor(o, "dst", &in->dst);
		for (int i = 0; i < 3 && i < in->axis; i++) {
			char name[8];

			snprintf(name, sizeof(name), "in%d", i);
			nrn_put_tensor(o, name, &in->src[i]);
		}
	} else if (in->subop == NISA_EXPR_DATA_INPUTS) {
		nrn_put(o, "expr_data.inputs");
		for (unsigned int i = 0; i < 4; i++) {
			const struct nisa_tensor *t = i ? &in->src[i - 1] : &in->dst;

			if (nrn_tensor_set(t))
				nrn_put_tensor(o, "in", t);
		}
	} else if (in->subop == NISA_EXPR_DATA_STEPS) {
		static const struct nisa_expr_step none;
		struct nisa_expr_steps rec;

		memcpy(&rec, in, sizeof(rec));
		nrn_put(o, "expr_data.steps");
		for (unsigned int j = 0; j < NISA_EXPR_STEPS_PER_DATA; j++)
			if (memcmp(&rec.step[j], &none, sizeof(none)))
				nrn_put_step(o, &rec.step[j]);
	} else {
		nrn_put(o, "expr_data.? (bad subop %u)", in->subop);
	}
	return o->overflow ? -ENOSPC : 0;
}

NRN_EXPORT int nrn_insn_format(const struct nisa_insn *in, char *out, size_t size)
{
	struct nrn_out o = { out, size, 0 };
	const char *sub;

	if (!in || !out || !size)
		return -EINVAL;
	if (in->opcode >= NISA_NUM_OPCODES) {
		nrn_put(&o, "(bad opcode %u)", in->opcode);
		return o.overflow ? -ENOSPC : 0;
	}
	if (in->opcode == NISA_INSN_EXPR || in->opcode == NISA_INSN_EXPR_DATA)
		return nrn_format_expr(in, &o);
	nrn_put(&o, "%s", nrn_opcode_names[in->opcode]);
	sub = nrn_subop_name(in);
	if (sub)
		nrn_put(&o, ".%s", sub);
	if (in->opcode == NISA_INSN_SCATTER) {
		unsigned int red = NISA_SCATTER_RED(in->subop);
		unsigned int mode = NISA_SCATTER_MODE(in->subop);

		nrn_put(&o, ".%s.%s", red < NISA_NUM_SCATTER ? nrn_scatter_names[red] : "?",
			mode < NISA_NUM_IDX ? nrn_index_names[mode] : "?");
	}
	if (in->opcode == NISA_INSN_NOP)
		return o.overflow ? -ENOSPC : 0;
	nrn_put_tensor(&o, "dst", &in->dst);
	/* The operands it uses (isa/neuron_isa.h's roles). */
	for (unsigned int i = 0; i < 3; i++) {
		char name[16];

		if (!nisa_operand_access(in->opcode, in->subop, in->flags, in->axis, i + 1))
			continue;
		snprintf(name, sizeof(name), "src%u", i);
		nrn_put_tensor(&o, name, &in->src[i]);
	}
	if (in->opcode == NISA_INSN_FILL || in->flags & NISA_IF_SCALAR)
		nrn_put(&o, " scalar=%g", nrn_double(in->scalar));
	if (in->opcode == NISA_INSN_UNARY && (in->scalar || in->alpha))
		nrn_put(&o, " p=%g q=%g", nrn_double(in->scalar),
			nrn_double(in->alpha));
	if (in->opcode == NISA_INSN_BINARY &&
	    (in->subop == NISA_BIN_ADD || in->subop == NISA_BIN_SUB))
		nrn_put(&o, " alpha=%g", nrn_double(in->alpha));
	if (nisa_opcode_class(in->opcode) == NISA_CLASS_AXIS ||
	    nisa_opcode_class(in->opcode) == NISA_CLASS_INDEX)
		nrn_put(&o, " axis=%d", in->axis);
	if (in->opcode == NISA_INSN_RANDOM)
		nrn_put(&o, " seed=%#llx offset=%llu",
			(unsigned long long)in->scalar, (unsigned long long)in->alpha);
	if (in->opcode == NISA_INSN_LINALG)
		nrn_put(&o, "%s%s%s%s%s%s%s",
			in->flags & NISA_IF_LA_UPPER ? " upper" : "",
			in->flags & NISA_IF_LA_UNIT ? " unit" : "",
			in->flags & NISA_IF_LA_TRANS ? " trans" : "",
			in->flags & NISA_IF_LA_RIGHT ? " right" : "",
			in->flags & NISA_IF_LA_FULL ? " full" : "",
			in->flags & NISA_IF_LA_NOVEC ? " novec" : "",
			in->flags & NISA_IF_LA_LOG ? " log" : "");
	if (in->opcode == NISA_INSN_IOTA)
		nrn_put(&o, " start=%g step=%g", nrn_double(in->scalar),
			nrn_double(in->alpha));
	if (in->flags & NISA_IF_REVERSE)
		nrn_put(&o, " reverse");
	if (in->flags & NISA_IF_ACCUMULATE)
		nrn_put(&o, " accumulate");
	if (in->opcode == NISA_INSN_SORT && (in->flags & NISA_IF_DESCENDING))
		nrn_put(&o, " descending");
	return o.overflow ? -ENOSPC : 0;
}

NRN_EXPORT const char *nrn_device_error_name(unsigned int code)
{
	/* docs/hardware.md, "Error codes"; named in isa/neuron_isa.h. */
	return nisa_err_name(code);
}
