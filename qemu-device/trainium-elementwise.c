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

/* The opcodes trn_insn_elementwise() is never called with. */
#define TRN_NOT_ELEMENTWISE                                                 \
    case NISA_INSN_NOP:                                                      \
    case NISA_INSN_REDUCE:                                                   \
    case NISA_INSN_SOFTMAX:                                                  \
    case NISA_INSN_MATMUL:                                                   \
    case NISA_INSN_GATHER:                                                   \
    case NISA_INSN_SCATTER_ADD:                                              \
    case NISA_INSN_TIMESTAMP:                                                \
    case NISA_INSN_RANDOM:                                                   \
    case NISA_NUM_OPCODES

/* Floating-point functions; false for one that has none (BITNOT). */
static bool trn_unary(enum nisa_unary fn, const double *x, double *o,
                      uint64_t n)
{
    uint64_t i;

    switch (fn) {
    case NISA_UN_NEG:
        for (i = 0; i < n; i++) {
            o[i] = -x[i];
        }
        break;
    case NISA_UN_ABS:
        for (i = 0; i < n; i++) {
            o[i] = fabs(x[i]);
        }
        break;
    case NISA_UN_EXP:
        for (i = 0; i < n; i++) {
            o[i] = exp(x[i]);
        }
        break;
    case NISA_UN_LOG:
        for (i = 0; i < n; i++) {
            o[i] = log(x[i]);
        }
        break;
    case NISA_UN_SQRT:
        for (i = 0; i < n; i++) {
            o[i] = sqrt(x[i]);
        }
        break;
    case NISA_UN_RSQRT:
        for (i = 0; i < n; i++) {
            o[i] = 1.0 / sqrt(x[i]);
        }
        break;
    case NISA_UN_RECIP:
        for (i = 0; i < n; i++) {
            o[i] = 1.0 / x[i];
        }
        break;
    case NISA_UN_RELU:
        /* NaN stays NaN: the comparison is false. */
        for (i = 0; i < n; i++) {
            o[i] = x[i] <= 0 ? 0.0 : x[i];
        }
        break;
    case NISA_UN_GELU_ERF:
        for (i = 0; i < n; i++) {
            o[i] = 0.5 * x[i] * (1.0 + erf(x[i] * M_SQRT1_2));
        }
        break;
    case NISA_UN_GELU_TANH:
        for (i = 0; i < n; i++) {
            double v = x[i];

            o[i] = 0.5 * v * (1.0 + tanh(0.7978845608028654 *
                                         (v + 0.044715 * v * v * v)));
        }
        break;
    case NISA_UN_SILU:
        for (i = 0; i < n; i++) {
            o[i] = x[i] / (1.0 + exp(-x[i]));
        }
        break;
    case NISA_UN_SIGMOID:
        for (i = 0; i < n; i++) {
            o[i] = 1.0 / (1.0 + exp(-x[i]));
        }
        break;
    case NISA_UN_TANH:
        for (i = 0; i < n; i++) {
            o[i] = tanh(x[i]);
        }
        break;
    case NISA_UN_SIN:
        for (i = 0; i < n; i++) {
            o[i] = sin(x[i]);
        }
        break;
    case NISA_UN_COS:
        for (i = 0; i < n; i++) {
            o[i] = cos(x[i]);
        }
        break;
    case NISA_UN_SQUARE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] * x[i];
        }
        break;
    case NISA_UN_SIGN:
        for (i = 0; i < n; i++) {
            o[i] = isnan(x[i]) ? x[i] : (double)((x[i] > 0) - (x[i] < 0));
        }
        break;
    case NISA_UN_ERF:
        for (i = 0; i < n; i++) {
            o[i] = erf(x[i]);
        }
        break;
    case NISA_UN_FLOOR:
        for (i = 0; i < n; i++) {
            o[i] = floor(x[i]);
        }
        break;
    case NISA_UN_GELU_ERF_GRAD:
        /* d/dx x * Phi(x) = Phi(x) + x * phi(x) */
        for (i = 0; i < n; i++) {
            double v = x[i];

            o[i] = 0.5 * (1.0 + erf(v * M_SQRT1_2)) +
                   v * exp(-0.5 * v * v) * 0.3989422804014327;
        }
        break;
    case NISA_UN_GELU_TANH_GRAD:
        for (i = 0; i < n; i++) {
            double v = x[i], k = 0.7978845608028654;
            double t = tanh(k * (v + 0.044715 * v * v * v));

            o[i] = 0.5 * (1.0 + t) +
                   0.5 * v * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * v * v);
        }
        break;
    case NISA_UN_SILU_GRAD:
        /* d/dx x * s(x) = s(x) * (1 + x * (1 - s(x))) */
        for (i = 0; i < n; i++) {
            double sg = 1.0 / (1.0 + exp(-x[i]));

            o[i] = sg * (1.0 + x[i] * (1.0 - sg));
        }
        break;
    case NISA_UN_BITNOT:
    case NISA_NUM_UNARY:
        return false;
    }
    return true;
}

/* Floating-point operators; false for one that has none (bitwise). */
static bool trn_binary(enum nisa_binary op, const double *x, const double *y,
                       double alpha, double *o, uint64_t n)
{
    uint64_t i;

    switch (op) {
    case NISA_BIN_ADD:
        for (i = 0; i < n; i++) {
            o[i] = x[i] + alpha * y[i];
        }
        break;
    case NISA_BIN_SUB:
        for (i = 0; i < n; i++) {
            o[i] = x[i] - alpha * y[i];
        }
        break;
    case NISA_BIN_MUL:
        for (i = 0; i < n; i++) {
            o[i] = x[i] * y[i];
        }
        break;
    case NISA_BIN_DIV:
        for (i = 0; i < n; i++) {
            o[i] = x[i] / y[i];
        }
        break;
    case NISA_BIN_MAX:
        /* NaN propagates, as torch.maximum does. */
        for (i = 0; i < n; i++) {
            o[i] = isnan(x[i]) || isnan(y[i]) ? NAN : fmax(x[i], y[i]);
        }
        break;
    case NISA_BIN_MIN:
        for (i = 0; i < n; i++) {
            o[i] = isnan(x[i]) || isnan(y[i]) ? NAN : fmin(x[i], y[i]);
        }
        break;
    case NISA_BIN_POW:
        for (i = 0; i < n; i++) {
            o[i] = pow(x[i], y[i]);
        }
        break;
    case NISA_BIN_FLOORDIV:
        for (i = 0; i < n; i++) {
            o[i] = floor(x[i] / y[i]);
        }
        break;
    case NISA_BIN_REM:
        /* The sign of the divisor, as torch.remainder and Python's %. */
        for (i = 0; i < n; i++) {
            double r = fmod(x[i], y[i]);

            o[i] = r != 0 && (r < 0) != (y[i] < 0) ? r + y[i] : r;
        }
        break;
    case NISA_BIN_AND:
    case NISA_BIN_OR:
    case NISA_BIN_XOR:
    case NISA_NUM_BINARY:
        return false;
    }
    return true;
}

static bool trn_compare(enum nisa_compare cmp, const double *x,
                        const double *y, double *o, uint64_t n)
{
    uint64_t i;

    switch (cmp) {
    case NISA_CMP_EQ:
        for (i = 0; i < n; i++) {
            o[i] = x[i] == y[i];
        }
        break;
    case NISA_CMP_NE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] != y[i];
        }
        break;
    case NISA_CMP_LT:
        for (i = 0; i < n; i++) {
            o[i] = x[i] < y[i];
        }
        break;
    case NISA_CMP_LE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] <= y[i];
        }
        break;
    case NISA_CMP_GT:
        for (i = 0; i < n; i++) {
            o[i] = x[i] > y[i];
        }
        break;
    case NISA_CMP_GE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] >= y[i];
        }
        break;
    case NISA_NUM_COMPARE:
        return false;
    }
    return true;
}

/*
 * Integer arithmetic, exact, on int64 (docs/hardware.md, "Numerics"): add,
 * sub, mul, neg, abs and square wrap modulo 2^64 (two's complement, as C
 * and PyTorch integers); division by zero gives 0, INT64_MIN / -1 wraps.
 * Returns false for a function that has no integer form (the caller
 * computes in double).
 */
static bool trn_unary_i64(enum nisa_unary fn, bool is_bool, const int64_t *x,
                          int64_t *o, uint64_t n)
{
    uint64_t i;

    switch (fn) {
    case NISA_UN_NEG:
        for (i = 0; i < n; i++) {
            o[i] = (int64_t)(0 - (uint64_t)x[i]);
        }
        return true;
    case NISA_UN_ABS:
        for (i = 0; i < n; i++) {
            o[i] = x[i] < 0 ? (int64_t)(0 - (uint64_t)x[i]) : x[i];
        }
        return true;
    case NISA_UN_SQUARE:
        for (i = 0; i < n; i++) {
            o[i] = (int64_t)((uint64_t)x[i] * (uint64_t)x[i]);
        }
        return true;
    case NISA_UN_SIGN:
        for (i = 0; i < n; i++) {
            o[i] = (x[i] > 0) - (x[i] < 0);
        }
        return true;
    case NISA_UN_RELU:
        for (i = 0; i < n; i++) {
            o[i] = MAX(x[i], 0);
        }
        return true;
    case NISA_UN_FLOOR:
        memcpy(o, x, n * sizeof(*o));
        return true;
    case NISA_UN_BITNOT:
        /* A bool's bitwise not is its logical not, as in PyTorch. */
        for (i = 0; i < n; i++) {
            o[i] = is_bool ? !x[i] : ~x[i];
        }
        return true;
    case NISA_UN_EXP:
    case NISA_UN_LOG:
    case NISA_UN_SQRT:
    case NISA_UN_RSQRT:
    case NISA_UN_RECIP:
    case NISA_UN_GELU_ERF:
    case NISA_UN_GELU_TANH:
    case NISA_UN_SILU:
    case NISA_UN_SIGMOID:
    case NISA_UN_TANH:
    case NISA_UN_SIN:
    case NISA_UN_COS:
    case NISA_UN_ERF:
    case NISA_UN_GELU_ERF_GRAD:
    case NISA_UN_GELU_TANH_GRAD:
    case NISA_UN_SILU_GRAD:
    case NISA_NUM_UNARY:
        break;
    }
    return false;
}

/* floor(x / y) and x - floor(x / y) * y, exactly; y == 0 gives 0. */
static int64_t trn_floordiv_i64(int64_t x, int64_t y)
{
    int64_t q;

    if (y == 0) {
        return 0;
    }
    if (y == -1) {
        return (int64_t)(0 - (uint64_t)x);  /* INT64_MIN / -1 wraps */
    }
    q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

static int64_t trn_rem_i64(int64_t x, int64_t y)
{
    int64_t r;

    if (y == 0 || y == -1) {
        return 0;
    }
    r = x % y;
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

static bool trn_binary_i64(enum nisa_binary op, const int64_t *x,
                           const int64_t *y, int64_t alpha, int64_t *o,
                           uint64_t n)
{
    uint64_t i;

    switch (op) {
    case NISA_BIN_ADD:
        for (i = 0; i < n; i++) {
            o[i] = (int64_t)((uint64_t)x[i] + (uint64_t)alpha * (uint64_t)y[i]);
        }
        return true;
    case NISA_BIN_SUB:
        for (i = 0; i < n; i++) {
            o[i] = (int64_t)((uint64_t)x[i] - (uint64_t)alpha * (uint64_t)y[i]);
        }
        return true;
    case NISA_BIN_MUL:
        for (i = 0; i < n; i++) {
            o[i] = (int64_t)((uint64_t)x[i] * (uint64_t)y[i]);
        }
        return true;
    case NISA_BIN_DIV:
        /* Truncating toward zero, as C. */
        for (i = 0; i < n; i++) {
            o[i] = y[i] == 0 ? 0 : y[i] == -1 ? (int64_t)(0 - (uint64_t)x[i]) :
                   x[i] / y[i];
        }
        return true;
    case NISA_BIN_MAX:
        for (i = 0; i < n; i++) {
            o[i] = MAX(x[i], y[i]);
        }
        return true;
    case NISA_BIN_MIN:
        for (i = 0; i < n; i++) {
            o[i] = MIN(x[i], y[i]);
        }
        return true;
    case NISA_BIN_AND:
        for (i = 0; i < n; i++) {
            o[i] = x[i] & y[i];
        }
        return true;
    case NISA_BIN_OR:
        for (i = 0; i < n; i++) {
            o[i] = x[i] | y[i];
        }
        return true;
    case NISA_BIN_XOR:
        for (i = 0; i < n; i++) {
            o[i] = x[i] ^ y[i];
        }
        return true;
    case NISA_BIN_FLOORDIV:
        for (i = 0; i < n; i++) {
            o[i] = trn_floordiv_i64(x[i], y[i]);
        }
        return true;
    case NISA_BIN_REM:
        for (i = 0; i < n; i++) {
            o[i] = trn_rem_i64(x[i], y[i]);
        }
        return true;
    case NISA_BIN_POW:
    case NISA_NUM_BINARY:
        break;
    }
    return false;
}

static bool trn_compare_i64(enum nisa_compare cmp, const int64_t *x,
                            const int64_t *y, int64_t *o, uint64_t n)
{
    uint64_t i;

    switch (cmp) {
    case NISA_CMP_EQ:
        for (i = 0; i < n; i++) {
            o[i] = x[i] == y[i];
        }
        return true;
    case NISA_CMP_NE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] != y[i];
        }
        return true;
    case NISA_CMP_LT:
        for (i = 0; i < n; i++) {
            o[i] = x[i] < y[i];
        }
        return true;
    case NISA_CMP_LE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] <= y[i];
        }
        return true;
    case NISA_CMP_GT:
        for (i = 0; i < n; i++) {
            o[i] = x[i] > y[i];
        }
        return true;
    case NISA_CMP_GE:
        for (i = 0; i < n; i++) {
            o[i] = x[i] >= y[i];
        }
        return true;
    case NISA_NUM_COMPARE:
        break;
    }
    return false;
}

/* @d as an int64, if it is one exactly. */
static bool trn_f64_to_i64(double d, int64_t *out)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) ||
        d != floor(d)) {
        return false;
    }
    *out = (int64_t)d;
    return true;
}

/* How many tensor sources, and which flags, each opcode takes. */
static uint32_t trn_ew_check(TrnKernel *k, const struct nisa_insn *in,
                             unsigned *nsrc)
{
    enum nisa_opcode op = le16_to_cpu(in->opcode);
    uint32_t flags = le32_to_cpu(in->flags);
    unsigned sub = le16_to_cpu(in->subop);
    uint32_t allowed = 0;
    unsigned limit = 1;

    switch (op) {
    case NISA_INSN_FILL:
        *nsrc = 0;
        break;
    case NISA_INSN_COPY:
        *nsrc = 1;
        break;
    case NISA_INSN_UNARY:
        *nsrc = 1;
        limit = NISA_NUM_UNARY;
        break;
    case NISA_INSN_BINARY:
        allowed = NISA_IF_SCALAR | NISA_IF_REVERSE;
        limit = NISA_NUM_BINARY;
        *nsrc = flags & NISA_IF_SCALAR ? 1 : 2;
        break;
    case NISA_INSN_COMPARE:
        allowed = NISA_IF_SCALAR;
        limit = NISA_NUM_COMPARE;
        *nsrc = flags & NISA_IF_SCALAR ? 1 : 2;
        break;
    case NISA_INSN_WHERE:
        *nsrc = 3;
        break;
    TRN_NOT_ELEMENTWISE:
    default:
        return trn_bad_insn(k, "not an elementwise opcode");
    }
    if (flags & ~allowed) {
        return trn_bad_insn(k, "flag not valid for this opcode");
    }
    if (sub >= limit) {
        return trn_bad_insn(k, "unknown subop");
    }
    return NISA_ERR_NONE;
}

typedef struct TrnEwBufs {
    double a[TRN_CHUNK_ELEMS];
    double b[TRN_CHUNK_ELEMS];
    double c[TRN_CHUNK_ELEMS];
    double o[TRN_CHUNK_ELEMS];
    int64_t ia[TRN_CHUNK_ELEMS];
    int64_t ib[TRN_CHUNK_ELEMS];
    int64_t ic[TRN_CHUNK_ELEMS];
    int64_t io[TRN_CHUNK_ELEMS];
} TrnEwBufs;

/* One elementwise instruction, its operands checked. */
typedef struct TrnEw {
    enum nisa_opcode op;
    unsigned sub;
    uint32_t flags;
    unsigned nsrc;
    double scalar, alpha;
    int64_t iscalar, ialpha;
    bool integer;      /* computed exactly on int64 */
    bool wrap;         /* an I32 result wraps (arithmetic) or saturates */
    TrnView dst, src[3];
} TrnEw;

/*
 * Integer instructions compute exactly on int64: every operand (but
 * WHERE's condition) is an integer type, the scalar and alpha they use
 * are integers, and the function has an integer form. The bitwise
 * functions have only that form.
 */
static bool trn_ew_integer(TrnEw *e)
{
    unsigned first = e->op == NISA_INSN_WHERE ? 1 : 0;
    bool use_scalar = (e->op == NISA_INSN_BINARY ||
                       e->op == NISA_INSN_COMPARE) &&
                      (e->flags & NISA_IF_SCALAR);
    int64_t dummy[1] = { 0 };

    if (e->op == NISA_INSN_FILL || !trn_is_int(e->dst.dtype)) {
        return false;
    }
    for (unsigned i = first; i < e->nsrc; i++) {
        if (!trn_is_int(e->src[i].dtype)) {
            return false;
        }
    }
    if (use_scalar && !trn_f64_to_i64(e->scalar, &e->iscalar)) {
        return false;
    }
    if (!trn_f64_to_i64(e->alpha, &e->ialpha)) {
        return false;
    }
    switch (e->op) {
    case NISA_INSN_UNARY:
        e->wrap = true;
        return trn_unary_i64(e->sub, false, dummy, dummy, 0);
    case NISA_INSN_BINARY:
        e->wrap = true;
        return trn_binary_i64(e->sub, dummy, dummy, 0, dummy, 0);
    case NISA_INSN_COPY:
    case NISA_INSN_COMPARE:
    case NISA_INSN_WHERE:
        return true;
    case NISA_INSN_FILL:
    TRN_NOT_ELEMENTWISE:
    default:
        return false;
    }
}

static bool trn_ew_bitwise(const TrnEw *e)
{
    return (e->op == NISA_INSN_UNARY && e->sub == NISA_UN_BITNOT) ||
           (e->op == NISA_INSN_BINARY &&
            (e->sub == NISA_BIN_AND || e->sub == NISA_BIN_OR ||
             e->sub == NISA_BIN_XOR));
}

/* One chunk of @n elements from @start, exactly on int64. */
static void trn_ew_chunk_i64(TrnEw *e, TrnEwBufs *buf, uint64_t start,
                             uint64_t n)
{
    int64_t *x = buf->ia, *y = buf->ib;
    unsigned i;

    for (i = 0; i < e->nsrc; i++) {
        if (e->op == NISA_INSN_WHERE && i == 0) {
            trn_gather(&e->src[0], start, n, buf->a);
            continue;
        }
        trn_gather_i64(&e->src[i], start, n,
                       i == 0 ? buf->ia : i == 1 ? buf->ib : buf->ic);
    }
    if ((e->op == NISA_INSN_BINARY || e->op == NISA_INSN_COMPARE) &&
        (e->flags & NISA_IF_SCALAR)) {
        for (uint64_t j = 0; j < n; j++) {
            buf->ib[j] = e->iscalar;
        }
    }
    if (e->flags & NISA_IF_REVERSE) {
        x = buf->ib;
        y = buf->ia;
    }
    switch (e->op) {
    case NISA_INSN_COPY:
        memcpy(buf->io, buf->ia, n * sizeof(int64_t));
        break;
    case NISA_INSN_UNARY:
        trn_unary_i64(e->sub, e->src[0].dtype == NISA_BOOL, buf->ia, buf->io,
                      n);
        break;
    case NISA_INSN_BINARY:
        trn_binary_i64(e->sub, x, y, e->ialpha, buf->io, n);
        break;
    case NISA_INSN_COMPARE:
        trn_compare_i64(e->sub, buf->ia, buf->ib, buf->io, n);
        break;
    case NISA_INSN_WHERE:
        for (uint64_t j = 0; j < n; j++) {
            buf->io[j] = buf->a[j] != 0 ? buf->ib[j] : buf->ic[j];
        }
        break;
    case NISA_INSN_FILL:
    TRN_NOT_ELEMENTWISE:
    default:
        g_assert_not_reached(); /* trn_ew_integer() admitted only these */
    }
    trn_scatter_i64(&e->dst, start, n, buf->io, e->wrap);
}

/* One chunk of @n elements from @start, in double. */
static void trn_ew_chunk_f64(TrnEw *e, TrnEwBufs *buf, uint64_t start,
                             uint64_t n)
{
    double *x = buf->a, *y = buf->b;
    uint64_t j;
    unsigned i;

    for (i = 0; i < e->nsrc; i++) {
        trn_gather(&e->src[i], start, n, i == 0 ? buf->a :
                   i == 1 ? buf->b : buf->c);
    }
    if ((e->op == NISA_INSN_BINARY || e->op == NISA_INSN_COMPARE) &&
        (e->flags & NISA_IF_SCALAR)) {
        for (j = 0; j < n; j++) {
            buf->b[j] = e->scalar;
        }
    }
    if (e->flags & NISA_IF_REVERSE) {
        x = buf->b;
        y = buf->a;
    }
    switch (e->op) {
    case NISA_INSN_FILL:
        for (j = 0; j < n; j++) {
            buf->o[j] = e->scalar;
        }
        break;
    case NISA_INSN_COPY:
        memcpy(buf->o, buf->a, n * sizeof(double));
        break;
    case NISA_INSN_UNARY:
        trn_unary(e->sub, buf->a, buf->o, n);
        break;
    case NISA_INSN_BINARY:
        trn_binary(e->sub, x, y, e->alpha, buf->o, n);
        break;
    case NISA_INSN_COMPARE:
        trn_compare(e->sub, buf->a, buf->b, buf->o, n);
        break;
    case NISA_INSN_WHERE:
        for (j = 0; j < n; j++) {
            buf->o[j] = buf->a[j] != 0 ? buf->b[j] : buf->c[j];
        }
        break;
    TRN_NOT_ELEMENTWISE:
    default:
        g_assert_not_reached(); /* trn_ew_check() admitted only these */
    }
    trn_scatter(&e->dst, start, n, buf->o);
}

/*
 * A copy between same-typed contiguous operands is a memmove, in pieces
 * (checking for a reset between them) ordered so that an overlap copies
 * as if through a temporary.
 */
static uint32_t trn_ew_memmove(TrnKernel *k, TrnEw *e)
{
    uint64_t bytes = e->dst.numel * e->dst.esize;
    uint64_t piece = TRN_ABORT_GRAIN * sizeof(double);
    uint8_t *d = e->dst.data, *s = e->src[0].data;

    if (d == s) {
        return NISA_ERR_NONE;
    }
    for (uint64_t done = 0; done < bytes; done += piece) {
        uint64_t n = MIN(piece, bytes - done);
        uint64_t at = d < s ? done : bytes - done - n;

        if (done && trn_queue_aborting(k->q)) {
            return NISA_ERR_ABORTED;
        }
        memmove(d + at, s + at, n);
    }
    return NISA_ERR_NONE;
}

uint32_t trn_insn_elementwise(TrnKernel *k, const struct nisa_insn *in)
{
    g_autofree TrnEwBufs *buf = NULL;
    g_autofree TrnEw *e = g_new0(TrnEw, 1);
    uint32_t err;
    unsigned i;

    e->op = le16_to_cpu(in->opcode);
    e->sub = le16_to_cpu(in->subop);
    e->flags = le32_to_cpu(in->flags);
    e->scalar = trn_f64(le64_to_cpu(in->scalar));
    e->alpha = trn_f64(le64_to_cpu(in->alpha));
    err = trn_ew_check(k, in, &e->nsrc);
    if (err) {
        return err;
    }
    err = trn_view_init(k, &in->dst, TRN_WRITE, &e->dst);
    for (i = 0; !err && i < e->nsrc; i++) {
        err = trn_view_init(k, &in->src[i], TRN_READ, &e->src[i]);
        if (!err && !trn_same_shape(&e->src[i], &e->dst)) {
            err = trn_bad_insn(k, "source shape differs from the destination's");
        }
    }
    if (err) {
        return err;
    }
    if (e->op != NISA_INSN_BINARY ||
        (e->sub != NISA_BIN_ADD && e->sub != NISA_BIN_SUB)) {
        e->alpha = 1.0;
    }
    e->integer = trn_ew_integer(e);
    if (trn_ew_bitwise(e) && !e->integer) {
        return trn_bad_insn(k, "bitwise operation on a non-integer operand");
    }
    if (!e->dst.numel) {
        return NISA_ERR_NONE;
    }
    if (e->op == NISA_INSN_COPY && e->src[0].dtype == e->dst.dtype &&
        e->src[0].contiguous && e->dst.contiguous) {
        return trn_ew_memmove(k, e);
    }

    buf = g_new(TrnEwBufs, 1);
    for (uint64_t start = 0; start < e->dst.numel; start += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, e->dst.numel - start);

        if (trn_tick(k, n)) {
            return NISA_ERR_ABORTED;
        }
        if (e->integer) {
            trn_ew_chunk_i64(e, buf, start, n);
        } else {
            trn_ew_chunk_f64(e, buf, start, n);
        }
    }
    return NISA_ERR_NONE;
}
