// SPDX-License-Identifier: MIT
/* Instructions and device error codes as text (neuron-objdump, messages). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const nrn_opcode_names[NISA_NUM_OPCODES] = {
	"nop", "fill", "copy", "unary", "binary", "compare", "where", "reduce",
	"softmax", "matmul", "gather", "scatter_add", "timestamp", "random",
	"linalg", "sort", "scan", "scatter", "iota", "expr", "expr_data",
};
/* The elementwise names come from the ISA's tables (isa/neuron_isa.h). */
#define NRN_OP_NAME(NAME, name, kind) #name,
static const char *const nrn_unary_names[NISA_NUM_UNARY] = {
	NISA_UNARY_OPS(NRN_OP_NAME)
};
static const char *const nrn_binary_names[NISA_NUM_BINARY] = {
	NISA_BINARY_OPS(NRN_OP_NAME)
};
static const char *const nrn_compare_names[NISA_NUM_COMPARE] = {
	NISA_COMPARE_OPS(NRN_OP_NAME)
};
static const char *const nrn_reduce_names[NISA_NUM_REDUCE] = {
	"sum", "mean", "max", "min", "argmax", "argmin", "prod",
};
static const char *const nrn_scan_names[NISA_NUM_SCAN] = {
	"sum", "prod", "max", "min", "logsumexp",
};
static const char *const nrn_softmax_names[NISA_NUM_SOFTMAX] = {
	"softmax", "log_softmax",
};
static const char *const nrn_index_names[NISA_NUM_IDX] = { "select", "element" };
static const char *const nrn_scatter_names[NISA_NUM_SCATTER] = {
	"assign", "add", "mul", "max", "min",
};
static const char *const nrn_random_names[NISA_NUM_RANDOM] = {
	"uniform", "normal", "bits",
};
static const char *const nrn_linalg_names[NISA_NUM_LINALG] = {
	"potrf", "getrf", "getrs", "trsm", "geqrf", "orgqr", "ormqr", "gesdd",
	"syevd", "ludet", "perm", "sytrf", "sytrs", "gels", "gelsy",
};
static const char *const nrn_dtype_names[NISA_NUM_DTYPES] = {
	"f32", "bf16", "i32", "i64", "bool", "f16", "u8", "i8", "i16",
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
		t->dtype < NISA_NUM_DTYPES ? nrn_dtype_names[t->dtype] : "?");
	for (unsigned int d = 0; d < t->ndim && d < NISA_MAX_DIMS; d++)
		nrn_put(o, "%s%u", d ? "," : "", t->shape[d]);
	nrn_put(o, "]/(");
	for (unsigned int d = 0; d < t->ndim && d < NISA_MAX_DIMS; d++)
		nrn_put(o, "%s%lld", d ? "," : "", (long long)t->strides[d]);
	nrn_put(o, ")");
}

static const char *nrn_subop_name(const struct nisa_insn *in)
{
	const char *const *names = NULL;
	unsigned int n = 0;

	switch (in->opcode) {
	case NISA_INSN_UNARY:
		names = nrn_unary_names, n = NISA_NUM_UNARY;
		break;
	case NISA_INSN_BINARY:
		names = nrn_binary_names, n = NISA_NUM_BINARY;
		break;
	case NISA_INSN_COMPARE:
		names = nrn_compare_names, n = NISA_NUM_COMPARE;
		break;
	case NISA_INSN_REDUCE:
		names = nrn_reduce_names, n = NISA_NUM_REDUCE;
		break;
	case NISA_INSN_SOFTMAX:
		names = nrn_softmax_names, n = NISA_NUM_SOFTMAX;
		break;
	case NISA_INSN_GATHER:
	case NISA_INSN_SCATTER_ADD:
		names = nrn_index_names, n = NISA_NUM_IDX;
		break;
	case NISA_INSN_RANDOM:
		names = nrn_random_names, n = NISA_NUM_RANDOM;
		break;
	case NISA_INSN_SCAN:
		names = nrn_scan_names, n = NISA_NUM_SCAN;
		break;
	case NISA_INSN_LINALG:
		names = nrn_linalg_names, n = NISA_NUM_LINALG;
		break;
	default:
		return NULL;
	}
	return in->subop < n && names[in->subop] ? names[in->subop] : "?";
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
	unsigned int nsrc = st->op == NISA_INSN_FILL ? 0 :
			    st->op == NISA_INSN_WHERE ? 3 :
			    st->op == NISA_INSN_BINARY || st->op == NISA_INSN_COMPARE ? 2 : 1;
	const char *sub = nrn_subop_name(&as);

	if (st->flags & NISA_IF_SCALAR)
		nsrc--;
	nrn_put(o, " r%u=%s", st->dst,
		st->op < NISA_NUM_OPCODES ? nrn_opcode_names[st->op] : "?");
	if (sub)
		nrn_put(o, ".%s", sub);
	nrn_put(o, "(");
	for (unsigned int j = 0; j < nsrc && j < 3; j++)
		nrn_put(o, "%sr%u", j ? "," : "", st->src[j]);
	if (st->op == NISA_INSN_FILL || st->flags & NISA_IF_SCALAR)
		nrn_put(o, "%s%g", nsrc ? "," : "", nrn_double(st->scalar));
	nrn_put(o, ")->%s", st->dtype < NISA_NUM_DTYPES ? nrn_dtype_names[st->dtype] : "?");
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
	static const unsigned int nsrc[NISA_NUM_OPCODES] = {
		[NISA_INSN_COPY] = 1, [NISA_INSN_UNARY] = 1, [NISA_INSN_BINARY] = 2,
		[NISA_INSN_COMPARE] = 2, [NISA_INSN_WHERE] = 3, [NISA_INSN_REDUCE] = 1,
		[NISA_INSN_SOFTMAX] = 1, [NISA_INSN_MATMUL] = 3, [NISA_INSN_GATHER] = 2,
		[NISA_INSN_SCATTER_ADD] = 2, [NISA_INSN_SORT] = 1, [NISA_INSN_SCAN] = 1, [NISA_INSN_SCATTER] = 2,
	};
	struct nrn_out o = { out, size, 0 };
	const char *sub;
	unsigned int n;

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
	n = nsrc[in->opcode];
	if (in->flags & NISA_IF_SCALAR)
		n--;
	if (in->opcode == NISA_INSN_MATMUL && !(in->flags & NISA_IF_BIAS))
		n--;
	if ((in->opcode == NISA_INSN_SORT || in->opcode == NISA_INSN_SCAN) &&
	    (in->flags & NISA_IF_INDICES))
		n++; /* src1: the indices written */
	if (in->opcode == NISA_INSN_LINALG) {
		static const struct nisa_tensor none;

		/* The sources a LINALG subop takes are the ones set. */
		for (n = 3; n && !memcmp(&in->src[n - 1], &none, sizeof(none));)
			n--;
	}
	for (unsigned int i = 0; i < n; i++) {
		char name[16];

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
	if (in->opcode == NISA_INSN_REDUCE || in->opcode == NISA_INSN_SOFTMAX ||
	    in->opcode == NISA_INSN_SORT || in->opcode == NISA_INSN_SCAN ||
	    in->opcode == NISA_INSN_GATHER || in->opcode == NISA_INSN_SCATTER_ADD ||
	    in->opcode == NISA_INSN_SCATTER)
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
	/* docs/hardware.md, "Error codes". */
	static const char *const names[] = {
		"none", "bad opcode", "bad descriptor", "device memory out of range",
		"host address not memory", "bad scatter-gather list",
		"no such buffer slot", "slot access denied",
		"operand outside its slot", "bad instruction", "injected fault",
		"aborted by a reset", "bad ring", "index out of range",
	};

	return code < NRN_ARRAY_SIZE(names) ? names[code] : "unknown device error";
}
