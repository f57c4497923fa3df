/*
 * Virtual Trainium accelerator: elementwise instructions -- FILL, COPY,
 * UNARY, BINARY, COMPARE, WHERE. Every operand has the destination's shape;
 * broadcasting is a zero stride. Elements go through double buffers of
 * TRN_CHUNK_ELEMS so that the arithmetic loops vectorize whatever the
 * operands' types and strides.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-isa.h"

typedef struct TrnEwBufs {
    double a[TRN_CHUNK_ELEMS];
    double b[TRN_CHUNK_ELEMS];
    double c[TRN_CHUNK_ELEMS];
    double o[TRN_CHUNK_ELEMS];
} TrnEwBufs;

static void trn_unary(unsigned fn, const double *x, double *o, uint64_t n)
{
    uint64_t i;

    switch (fn) {
    case NRN_UN_NEG:
        for (i = 0; i < n; i++) {
            o[i] = -x[i];
        }
        break;
    case NRN_UN_ABS:
        for (i = 0; i < n; i++) {
            o[i] = fabs(x[i]);
        }
        break;
    case NRN_UN_EXP:
        for (i = 0; i < n; i++) {
            o[i] = exp(x[i]);
        }
        break;
    case NRN_UN_LOG:
        for (i = 0; i < n; i++) {
            o[i] = log(x[i]);
        }
        break;
    case NRN_UN_SQRT:
        for (i = 0; i < n; i++) {
            o[i] = sqrt(x[i]);
        }
        break;
    case NRN_UN_RSQRT:
        for (i = 0; i < n; i++) {
            o[i] = 1.0 / sqrt(x[i]);
        }
        break;
    case NRN_UN_RECIP:
        for (i = 0; i < n; i++) {
            o[i] = 1.0 / x[i];
        }
        break;
    case NRN_UN_RELU:
        /* NaN stays NaN: the comparison is false. */
        for (i = 0; i < n; i++) {
            o[i] = x[i] <= 0 ? 0.0 : x[i];
        }
        break;
    case NRN_UN_GELU_ERF:
        for (i = 0; i < n; i++) {
            o[i] = 0.5 * x[i] * (1.0 + erf(x[i] * M_SQRT1_2));
        }
        break;
    case NRN_UN_GELU_TANH:
        for (i = 0; i < n; i++) {
            double v = x[i];

            o[i] = 0.5 * v * (1.0 + tanh(0.7978845608028654 *
                                         (v + 0.044715 * v * v * v)));
        }
        break;
    case NRN_UN_SILU:
        for (i = 0; i < n; i++) {
            o[i] = x[i] / (1.0 + exp(-x[i]));
        }
        break;
    case NRN_UN_SIGMOID:
        for (i = 0; i < n; i++) {
            o[i] = 1.0 / (1.0 + exp(-x[i]));
        }
        break;
    case NRN_UN_TANH:
        for (i = 0; i < n; i++) {
            o[i] = tanh(x[i]);
        }
        break;
    case NRN_UN_SIN:
        for (i = 0; i < n; i++) {
            o[i] = sin(x[i]);
        }
        break;
    case NRN_UN_COS:
        for (i = 0; i < n; i++) {
            o[i] = cos(x[i]);
        }
        break;
    case NRN_UN_SQUARE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] * x[i];
        }
        break;
    case NRN_UN_SIGN:
        for (i = 0; i < n; i++) {
            o[i] = isnan(x[i]) ? x[i] : (double)((x[i] > 0) - (x[i] < 0));
        }
        break;
    case NRN_UN_ERF:
        for (i = 0; i < n; i++) {
            o[i] = erf(x[i]);
        }
        break;
    case NRN_UN_FLOOR:
        for (i = 0; i < n; i++) {
            o[i] = floor(x[i]);
        }
        break;
    case NRN_UN_GELU_ERF_GRAD:
        /* d/dx x * Phi(x) = Phi(x) + x * phi(x) */
        for (i = 0; i < n; i++) {
            double v = x[i];

            o[i] = 0.5 * (1.0 + erf(v * M_SQRT1_2)) +
                   v * exp(-0.5 * v * v) * 0.3989422804014327;
        }
        break;
    case NRN_UN_GELU_TANH_GRAD:
        for (i = 0; i < n; i++) {
            double v = x[i], k = 0.7978845608028654;
            double t = tanh(k * (v + 0.044715 * v * v * v));

            o[i] = 0.5 * (1.0 + t) +
                   0.5 * v * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * v * v);
        }
        break;
    case NRN_UN_SILU_GRAD:
        /* d/dx x * s(x) = s(x) * (1 + x * (1 - s(x))) */
        for (i = 0; i < n; i++) {
            double sg = 1.0 / (1.0 + exp(-x[i]));

            o[i] = sg * (1.0 + x[i] * (1.0 - sg));
        }
        break;
    }
}

static void trn_binary(unsigned op, const double *x, const double *y,
                       double alpha, double *o, uint64_t n)
{
    uint64_t i;

    switch (op) {
    case NRN_BIN_ADD:
        for (i = 0; i < n; i++) {
            o[i] = x[i] + alpha * y[i];
        }
        break;
    case NRN_BIN_SUB:
        for (i = 0; i < n; i++) {
            o[i] = x[i] - alpha * y[i];
        }
        break;
    case NRN_BIN_MUL:
        for (i = 0; i < n; i++) {
            o[i] = x[i] * y[i];
        }
        break;
    case NRN_BIN_DIV:
        for (i = 0; i < n; i++) {
            o[i] = x[i] / y[i];
        }
        break;
    case NRN_BIN_MAX:
        /* NaN propagates, as torch.maximum does. */
        for (i = 0; i < n; i++) {
            o[i] = isnan(x[i]) || isnan(y[i]) ? NAN : fmax(x[i], y[i]);
        }
        break;
    case NRN_BIN_MIN:
        for (i = 0; i < n; i++) {
            o[i] = isnan(x[i]) || isnan(y[i]) ? NAN : fmin(x[i], y[i]);
        }
        break;
    case NRN_BIN_POW:
        for (i = 0; i < n; i++) {
            o[i] = pow(x[i], y[i]);
        }
        break;
    }
}

static void trn_compare(unsigned cmp, const double *x, const double *y,
                        double *o, uint64_t n)
{
    uint64_t i;

    switch (cmp) {
    case NRN_CMP_EQ:
        for (i = 0; i < n; i++) {
            o[i] = x[i] == y[i];
        }
        break;
    case NRN_CMP_NE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] != y[i];
        }
        break;
    case NRN_CMP_LT:
        for (i = 0; i < n; i++) {
            o[i] = x[i] < y[i];
        }
        break;
    case NRN_CMP_LE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] <= y[i];
        }
        break;
    case NRN_CMP_GT:
        for (i = 0; i < n; i++) {
            o[i] = x[i] > y[i];
        }
        break;
    case NRN_CMP_GE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] >= y[i];
        }
        break;
    }
}

/* How many tensor sources, and which flags, each opcode takes. */
static uint32_t trn_ew_check(TrnKernel *k, const struct nrn_insn *in,
                             unsigned *nsrc)
{
    uint32_t flags = le32_to_cpu(in->flags);
    unsigned sub = le16_to_cpu(in->subop);
    uint32_t allowed = 0;
    unsigned limit = 1;

    switch (le16_to_cpu(in->opcode)) {
    case NRN_INSN_FILL:
        *nsrc = 0;
        break;
    case NRN_INSN_COPY:
        *nsrc = 1;
        break;
    case NRN_INSN_UNARY:
        *nsrc = 1;
        limit = NRN_NUM_UNARY;
        break;
    case NRN_INSN_BINARY:
        allowed = NRN_IF_SCALAR | NRN_IF_REVERSE;
        limit = NRN_NUM_BINARY;
        *nsrc = flags & NRN_IF_SCALAR ? 1 : 2;
        break;
    case NRN_INSN_COMPARE:
        allowed = NRN_IF_SCALAR;
        limit = NRN_NUM_COMPARE;
        *nsrc = flags & NRN_IF_SCALAR ? 1 : 2;
        break;
    default: /* NRN_INSN_WHERE */
        *nsrc = 3;
        break;
    }
    if (flags & ~allowed) {
        return trn_bad_insn(k, "flag not valid for this opcode");
    }
    if (sub >= limit) {
        return trn_bad_insn(k, "unknown subop");
    }
    return NRN_ERR_NONE;
}

uint32_t trn_insn_elementwise(TrnKernel *k, const struct nrn_insn *in)
{
    unsigned op = le16_to_cpu(in->opcode), sub = le16_to_cpu(in->subop);
    uint32_t flags = le32_to_cpu(in->flags), err;
    double scalar = trn_f64(le64_to_cpu(in->scalar));
    double alpha = trn_f64(le64_to_cpu(in->alpha));
    g_autofree TrnEwBufs *buf = NULL;
    TrnView dst, src[3];
    unsigned nsrc, i;

    err = trn_ew_check(k, in, &nsrc);
    if (err) {
        return err;
    }
    err = trn_view_init(k, &in->dst, TRN_WRITE, &dst);
    for (i = 0; !err && i < nsrc; i++) {
        err = trn_view_init(k, &in->src[i], TRN_READ, &src[i]);
        if (!err && !trn_same_shape(&src[i], &dst)) {
            err = trn_bad_insn(k, "source shape differs from the destination's");
        }
    }
    if (err || !dst.numel) {
        return err;
    }
    if (op != NRN_INSN_BINARY || (sub != NRN_BIN_ADD && sub != NRN_BIN_SUB)) {
        alpha = 1.0;
    }

    /* A plain copy between same-typed contiguous operands is a memmove. */
    if (op == NRN_INSN_COPY && src[0].dtype == dst.dtype &&
        src[0].contiguous && dst.contiguous) {
        memmove(dst.data, src[0].data, dst.numel * dst.esize);
        return NRN_ERR_NONE;
    }

    buf = g_new(TrnEwBufs, 1);
    for (uint64_t start = 0; start < dst.numel; start += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, dst.numel - start), j;
        double *x = buf->a, *y = buf->b;

        if (trn_queue_aborting(k->q)) {
            return NRN_ERR_ABORTED;
        }
        for (i = 0; i < nsrc; i++) {
            trn_gather(&src[i], start, n, i == 0 ? buf->a :
                       i == 1 ? buf->b : buf->c);
        }
        if ((op == NRN_INSN_BINARY || op == NRN_INSN_COMPARE) &&
            (flags & NRN_IF_SCALAR)) {
            for (j = 0; j < n; j++) {
                buf->b[j] = scalar;
            }
        }
        if (flags & NRN_IF_REVERSE) {
            x = buf->b;
            y = buf->a;
        }
        switch (op) {
        case NRN_INSN_FILL:
            for (j = 0; j < n; j++) {
                buf->o[j] = scalar;
            }
            break;
        case NRN_INSN_COPY:
            memcpy(buf->o, buf->a, n * sizeof(double));
            break;
        case NRN_INSN_UNARY:
            trn_unary(sub, buf->a, buf->o, n);
            break;
        case NRN_INSN_BINARY:
            trn_binary(sub, x, y, alpha, buf->o, n);
            break;
        case NRN_INSN_COMPARE:
            trn_compare(sub, buf->a, buf->b, buf->o, n);
            break;
        case NRN_INSN_WHERE:
            for (j = 0; j < n; j++) {
                buf->o[j] = buf->a[j] != 0 ? buf->b[j] : buf->c[j];
            }
            break;
        }
        trn_scatter(&dst, start, n, buf->o);
    }
    return NRN_ERR_NONE;
}
