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
#include "trainium-ew-ops.h"
#include "trainium-ew.h"
#include "trainium-iter.h"

/*
 * The dispatch of UNARY, BINARY and COMPARE, generated from the ISA's
 * tables: one loop per function over a chunk, calling its inline arithmetic
 * (trainium-ew-ops.h). The double form exists for kinds EXACT and REAL, the
 * int64 form for EXACT and BITS; a function of the other kind returns false.
 */
/*
 * o[i] = @VAL for i < cnt (@VAL reads i): blocks of 8 computed into a
 * local array before they are stored, so that -O2 vectorizes them (no
 * possible overlap of o with the sources), then the tail.
 */
#define TRN_EW_LOOP(VAL)                                                     \
    do {                                                                     \
        for (i = 0; i + 8 <= cnt; i += 8) {                                  \
            double t_[8];                                                    \
            for (unsigned u_ = 0; u_ < 8; u_++) {                            \
                uint64_t j_ = i;                                             \
                i = j_ + u_;                                                 \
                t_[u_] = (VAL);                                              \
                i = j_;                                                      \
            }                                                                \
            for (unsigned u_ = 0; u_ < 8; u_++) {                            \
                o[i + u_] = t_[u_];                                          \
            }                                                                \
        }                                                                    \
        for (; i < cnt; i++) {                                               \
            o[i] = (VAL);                                                    \
        }                                                                    \
    } while (0)
#define TRN_UN_F(NAME, name)                                                 \
    case NISA_UN_##NAME:                                                     \
        TRN_EW_LOOP(trn_un_##name(x[i], p, q));                              \
        return true;
#define TRN_UN_I(NAME, name)                                                 \
    case NISA_UN_##NAME:                                                     \
        for (i = 0; i < cnt; i++) {                                          \
            o[i] = trn_uni_##name(x[i], is_bool);                            \
        }                                                                    \
        return true;
#define TRN_BIN_F(NAME, name)                                                \
    case NISA_BIN_##NAME:                                                    \
        TRN_EW_LOOP(trn_bin_##name(x[i], y[i], alpha));                      \
        return true;
#define TRN_BIN_I(NAME, name)                                                \
    case NISA_BIN_##NAME:                                                    \
        for (i = 0; i < cnt; i++) {                                          \
            o[i] = trn_bini_##name(x[i], y[i], alpha);                       \
        }                                                                    \
        return true;
#define TRN_CMP_F(NAME, name)                                                \
    case NISA_CMP_##NAME:                                                    \
        TRN_EW_LOOP(trn_cmp_##name(x[i], y[i]));                             \
        return true;
#define TRN_CMP_I(NAME, name)                                                \
    case NISA_CMP_##NAME:                                                    \
        for (i = 0; i < cnt; i++) {                                          \
            o[i] = trn_cmpi_##name(x[i], y[i]);                              \
        }                                                                    \
        return true;
#define TRN_NONE(ENUM) case ENUM: return false;

#define TRN_UN_F_EXACT(N, n) TRN_UN_F(N, n)
#define TRN_UN_F_REAL(N, n) TRN_UN_F(N, n)
#define TRN_UN_F_BITS(N, n) TRN_NONE(NISA_UN_##N)
#define TRN_UN_I_EXACT(N, n) TRN_UN_I(N, n)
#define TRN_UN_I_REAL(N, n) TRN_NONE(NISA_UN_##N)
#define TRN_UN_I_BITS(N, n) TRN_UN_I(N, n)
#define TRN_BIN_F_EXACT(N, n) TRN_BIN_F(N, n)
#define TRN_BIN_F_REAL(N, n) TRN_BIN_F(N, n)
#define TRN_BIN_F_BITS(N, n) TRN_NONE(NISA_BIN_##N)
#define TRN_BIN_I_EXACT(N, n) TRN_BIN_I(N, n)
#define TRN_BIN_I_REAL(N, n) TRN_NONE(NISA_BIN_##N)
#define TRN_BIN_I_BITS(N, n) TRN_BIN_I(N, n)
#define TRN_CMP_F_EXACT(N, n) TRN_CMP_F(N, n)
#define TRN_CMP_I_EXACT(N, n) TRN_CMP_I(N, n)

#define TRN_UN_FCASE(N, n, kind) TRN_UN_F_##kind(N, n)
#define TRN_UN_ICASE(N, n, kind) TRN_UN_I_##kind(N, n)
#define TRN_BIN_FCASE(N, n, kind, ...) TRN_BIN_F_##kind(N, n)
#define TRN_BIN_ICASE(N, n, kind, ...) TRN_BIN_I_##kind(N, n)
#define TRN_CMP_FCASE(N, n, kind) TRN_CMP_F_##kind(N, n)
#define TRN_CMP_ICASE(N, n, kind) TRN_CMP_I_##kind(N, n)

/* Kind BITS: integer operands only. */
#define TRN_IS_BITS_EXACT(ENUM) case ENUM: return false;
#define TRN_IS_BITS_REAL(ENUM) case ENUM: return false;
#define TRN_IS_BITS_BITS(ENUM) case ENUM: return true;
#define TRN_UN_BITS(N, n, kind) TRN_IS_BITS_##kind(NISA_UN_##N)
#define TRN_BIN_BITS(N, n, kind, ...) TRN_IS_BITS_##kind(NISA_BIN_##N)

static inline __attribute__((always_inline)) bool trn_unary(enum nisa_unary fn, const double *x, double p, double q,
                      double *o, uint64_t cnt)
{
    uint64_t i;

    switch (fn) {
    NISA_UNARY_OPS(TRN_UN_FCASE)
    case NISA_NUM_UNARY:
        break;
    }
    return false;
}

static inline __attribute__((always_inline)) bool trn_binary(enum nisa_binary op, const double *x, const double *y,
                       double alpha, double *o, uint64_t cnt)
{
    uint64_t i;

    switch (op) {
    NISA_BINARY_OPS(TRN_BIN_FCASE)
    case NISA_NUM_BINARY:
        break;
    }
    return false;
}

static inline __attribute__((always_inline)) bool trn_compare(enum nisa_compare cmp, const double *x,
                        const double *y, double *o, uint64_t cnt)
{
    uint64_t i;

    switch (cmp) {
    NISA_COMPARE_OPS(TRN_CMP_FCASE)
    case NISA_NUM_COMPARE:
        break;
    }
    return false;
}

/*
 * Integer arithmetic, exact, on int64 (docs/hardware.md, "Numerics").
 * Returns false for a function that has no integer form (the caller
 * computes in double).
 */
static bool trn_unary_i64(enum nisa_unary fn, bool is_bool, const int64_t *x,
                          int64_t *o, uint64_t cnt)
{
    uint64_t i;

    switch (fn) {
    NISA_UNARY_OPS(TRN_UN_ICASE)
    case NISA_NUM_UNARY:
        break;
    }
    return false;
}

static bool trn_binary_i64(enum nisa_binary op, const int64_t *x,
                           const int64_t *y, int64_t alpha, int64_t *o,
                           uint64_t cnt)
{
    uint64_t i;

    switch (op) {
    NISA_BINARY_OPS(TRN_BIN_ICASE)
    case NISA_NUM_BINARY:
        break;
    }
    return false;
}

static bool trn_compare_i64(enum nisa_compare cmp, const int64_t *x,
                            const int64_t *y, int64_t *o, uint64_t cnt)
{
    uint64_t i;

    switch (cmp) {
    NISA_COMPARE_OPS(TRN_CMP_ICASE)
    case NISA_NUM_COMPARE:
        break;
    }
    return false;
}

static bool trn_unary_bits(enum nisa_unary fn)
{
    switch (fn) {
    NISA_UNARY_OPS(TRN_UN_BITS)
    case NISA_NUM_UNARY:
        break;
    }
    return false;
}

static bool trn_binary_bits(enum nisa_binary op)
{
    switch (op) {
    NISA_BINARY_OPS(TRN_BIN_BITS)
    case NISA_NUM_BINARY:
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
uint32_t trn_ew_check(TrnKernel *k, const struct nisa_insn *in,
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


/*
 * Integer instructions compute exactly on int64: every operand (but
 * WHERE's condition) is an integer type, the scalar and alpha they use
 * are integers, and the function has an integer form. The bitwise
 * functions have only that form.
 */
bool trn_ew_integer(TrnEw *e)
{
    unsigned first = e->op == NISA_INSN_WHERE ? 1 : 0;
    bool use_scalar = (e->op == NISA_INSN_BINARY ||
                       e->op == NISA_INSN_COMPARE) &&
                      (e->flags & NISA_IF_SCALAR);
    int64_t dummy[1] = { 0 };

    /* UNARY's parameters are @scalar and @alpha; BINARY's alpha scales src1. */
    if (e->op != NISA_INSN_UNARY && (e->op != NISA_INSN_BINARY ||
        (e->sub != NISA_BIN_ADD && e->sub != NISA_BIN_SUB))) {
        e->alpha = 1.0;
    }
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

bool trn_ew_bitwise(const TrnEw *e)
{
    return (e->op == NISA_INSN_UNARY && trn_unary_bits(e->sub)) ||
           (e->op == NISA_INSN_BINARY && trn_binary_bits(e->sub));
}

void trn_ew_apply_i64(const TrnEw *e, const double *cond,
                      const int64_t *const src[3], int64_t *sbuf,
                      int64_t *o, uint64_t n)
{
    const int64_t *x = src[0], *y = src[1];

    if ((e->op == NISA_INSN_BINARY || e->op == NISA_INSN_COMPARE) &&
        (e->flags & NISA_IF_SCALAR)) {
        for (uint64_t j = 0; j < n; j++) {
            sbuf[j] = e->iscalar;
        }
        y = sbuf;
    }
    if (e->flags & NISA_IF_REVERSE) {
        const int64_t *t = x;

        x = y;
        y = t;
    }
    switch (e->op) {
    case NISA_INSN_COPY:
        memmove(o, src[0], n * sizeof(int64_t));
        break;
    case NISA_INSN_UNARY:
        trn_unary_i64(e->sub, e->src[0].dtype == NISA_BOOL, src[0], o, n);
        break;
    case NISA_INSN_BINARY:
        trn_binary_i64(e->sub, x, y, e->ialpha, o, n);
        break;
    case NISA_INSN_COMPARE:
        trn_compare_i64(e->sub, x, y, o, n);  /* no REVERSE form */
        break;
    case NISA_INSN_WHERE:
        for (uint64_t j = 0; j < n; j++) {
            o[j] = cond[j] != 0 ? src[1][j] : src[2][j];
        }
        break;
    case NISA_INSN_FILL:
    TRN_NOT_ELEMENTWISE:
    default:
        g_assert_not_reached(); /* trn_ew_integer() admitted only these */
    }
}

/* An integer division (div, div_trunc, floor-divide, remainder, fmod). */
static bool trn_ew_int_division(const TrnEw *e)
{
    if (!e->integer || e->op != NISA_INSN_BINARY) {
        return false;
    }
    switch (e->sub) {
    case NISA_BIN_DIV:
    case NISA_BIN_DIV_TRUNC:
    case NISA_BIN_FLOORDIV:
    case NISA_BIN_REM:
    case NISA_BIN_FMOD:
        return true;
    default:
        return false;
    }
}

bool trn_ew_divides_by_zero(const TrnEw *e, const int64_t *const src[3],
                            uint64_t n)
{
    const int64_t *y;

    if (!trn_ew_int_division(e)) {
        return false;
    }
    if (e->flags & NISA_IF_REVERSE) {
        y = src[0];
    } else if (e->flags & NISA_IF_SCALAR) {
        return e->iscalar == 0;
    } else {
        y = src[1];
    }
    for (uint64_t j = 0; j < n; j++) {
        if (y[j] == 0) {
            return true;
        }
    }
    return false;
}

/*
 * An integer division's divisors, read before anything is written:
 * NISA_ERR_DIV_ZERO if one of them is 0 (the instruction then fails and
 * writes nothing), NISA_ERR_ABORTED on a reset meanwhile.
 */
static uint32_t trn_ew_check_divisors(TrnKernel *k, const TrnEw *e,
                                      TrnEwBufs *buf)
{
    const TrnView *v;

    if (!trn_ew_int_division(e)) {
        return NISA_ERR_NONE;
    }
    if (!(e->flags & NISA_IF_REVERSE) && (e->flags & NISA_IF_SCALAR)) {
        return e->iscalar ? NISA_ERR_NONE : NISA_ERR_DIV_ZERO;
    }
    v = e->flags & NISA_IF_REVERSE ? &e->src[0] : &e->src[1];
    for (uint64_t start = 0; start < v->numel; start += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, v->numel - start);

        if (trn_tick(k, n)) {
            return NISA_ERR_ABORTED;
        }
        trn_gather_i64(v, start, n, buf->ib);
        for (uint64_t j = 0; j < n; j++) {
            if (buf->ib[j] == 0) {
                return NISA_ERR_DIV_ZERO;
            }
        }
    }
    return NISA_ERR_NONE;
}

/* One chunk of @n elements from @start, exactly on int64. */
static void trn_ew_chunk_i64(TrnEw *e, TrnEwBufs *buf, uint64_t start,
                             uint64_t n)
{
    const int64_t *src[3] = { buf->ia, buf->ib, buf->ic };
    unsigned i;

    for (i = 0; i < e->nsrc; i++) {
        if (e->op == NISA_INSN_WHERE && i == 0) {
            trn_gather(&e->src[0], start, n, buf->a);
            continue;
        }
        trn_gather_i64(&e->src[i], start, n,
                       i == 0 ? buf->ia : i == 1 ? buf->ib : buf->ic);
    }
    trn_ew_apply_i64(e, buf->a, src, buf->ic, buf->io, n);
    trn_scatter_i64(&e->dst, start, n, buf->io, e->wrap);
}

/*
 * The functions whose float32 result PyTorch computes in float32 steps
 * (trn_un_round_dec(), trn_bin_floordiv(), trn_bin_div_trunc(),
 * trn_bin_nextafter()), into a float64 destination: in float64, as its
 * double kernels do. False for every other function.
 */
static bool trn_ew_f64_own(const TrnEw *e, const double *x, const double *y,
                           double *o, uint64_t n)
{
    double (*bin)(double, double, double) = NULL;

    if (e->op == NISA_INSN_UNARY && e->sub == NISA_UN_ROUND_DEC) {
        for (uint64_t j = 0; j < n; j++) {
            o[j] = trn_un_round_dec_f64(x[j], e->scalar, e->alpha);
        }
        return true;
    }
    if (e->op != NISA_INSN_BINARY) {
        return false;
    }
    switch (e->sub) {
    case NISA_BIN_FLOORDIV:
        bin = trn_bin_floordiv_f64;
        break;
    case NISA_BIN_DIV_TRUNC:
        bin = trn_bin_div_trunc_f64;
        break;
    case NISA_BIN_NEXTAFTER:
        bin = trn_bin_nextafter_f64;
        break;
    default:
        return false;
    }
    for (uint64_t j = 0; j < n; j++) {
        o[j] = bin(x[j], y[j], e->alpha);
    }
    return true;
}

TRN_CLONES void trn_ew_apply_f64(const TrnEw *e, const double *const src[3],
                                 double *sbuf, double *o, uint64_t n)
{
    const double *x = src[0], *y = src[1];
    uint64_t j;

    if ((e->op == NISA_INSN_BINARY || e->op == NISA_INSN_COMPARE) &&
        (e->flags & NISA_IF_SCALAR)) {
        for (j = 0; j < n; j++) {
            sbuf[j] = e->scalar;
        }
        y = sbuf;
    }
    if (e->flags & NISA_IF_REVERSE) {
        const double *t = x;

        x = y;
        y = t;
    }
    if (e->dst.dtype == NISA_F64 && trn_ew_f64_own(e, x, y, o, n)) {
        return;
    }
    switch (e->op) {
    case NISA_INSN_FILL:
        for (j = 0; j < n; j++) {
            o[j] = e->scalar;
        }
        break;
    case NISA_INSN_COPY:
        memmove(o, src[0], n * sizeof(double));
        break;
    case NISA_INSN_UNARY:
        trn_unary(e->sub, src[0], e->scalar, e->alpha, o, n);
        break;
    case NISA_INSN_BINARY:
        trn_binary(e->sub, x, y, e->alpha, o, n);
        break;
    case NISA_INSN_COMPARE:
        trn_compare(e->sub, x, y, o, n);      /* no REVERSE form */
        break;
    case NISA_INSN_WHERE:
        for (j = 0; j < n; j++) {
            o[j] = src[0][j] != 0 ? src[1][j] : src[2][j];
        }
        break;
    TRN_NOT_ELEMENTWISE:
    default:
        g_assert_not_reached(); /* trn_ew_check() admitted only these */
    }
}

/* One chunk of @n elements from @start, in double. */
static void trn_ew_chunk_f64(TrnEw *e, TrnEwBufs *buf, uint64_t start,
                             uint64_t n)
{
    const double *src[3] = { buf->a, buf->b, buf->c };
    unsigned i;

    for (i = 0; i < e->nsrc; i++) {
        trn_gather(&e->src[i], start, n, i == 0 ? buf->a :
                   i == 1 ? buf->b : buf->c);
    }
    trn_ew_apply_f64(e, src, buf->c, buf->o, n);
    trn_scatter(&e->dst, start, n, buf->o);
}

/*
 * A COPY between operands of one dtype copies bits (a NaN keeps its
 * payload, as PyTorch's copies keep it). Contiguous operands: a memmove,
 * in pieces (checking for a reset between them) ordered so that an
 * overlap copies as if through a temporary.
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

/*
 * Any other layout: element by element along the runs of trainium-iter.h;
 * a run with unit strides goes in blocks of 8 elements, each a memcpy of a
 * constant size that the compiler inlines as vector moves (a 2x2 window's
 * row is 2 elements: a call to memcpy per row would cost more than the
 * copy). A transpose -- dst's runs contiguous, the source's runs strided
 * but its rows adjacent elements -- goes 8 rows at a time: element j of
 * the 8 rows is one read of 8 adjacent source elements (one cache line at
 * most, where the plain walk touches 8), written to 8 rows of dst that
 * each advance in order (a float32 [1024, 1024] transpose 1.9 -> 0.43 ns
 * an element, neuron-bench's card_copy_strided_f32). The same bits land
 * in the same places either way.
 */
#define TRN_COPY_BITS_RUN(name, type)                                        \
static void name(void *opaque, const TrnRuns *runs)                          \
{                                                                            \
    int64_t n = (int64_t)runs->n, sd = runs->st[0], ss = runs->st[1];        \
    uint64_t r = 0;                                                          \
                                                                             \
    if (sd == 1 && ss != 1 && runs->row[1] == (int64_t)sizeof(type)) {       \
        for (; r + 8 <= runs->rows; r += 8) {                                \
            uint8_t *d = runs->p[0] + (int64_t)r * runs->row[0];             \
            const type *s =                                                  \
                (const type *)(runs->p[1] + (int64_t)r * runs->row[1]);      \
                                                                             \
            for (int64_t j = 0; j < n; j++) {                                \
                type v[8];                                                   \
                                                                             \
                memcpy(v, s + j * ss, sizeof(v));                            \
                for (unsigned q = 0; q < 8; q++) {                           \
                    memcpy(d + q * runs->row[0] + j * (int64_t)sizeof(type), \
                           &v[q], sizeof(type));                             \
                }                                                            \
            }                                                                \
        }                                                                    \
    }                                                                        \
    for (; r < runs->rows; r++) {                                            \
        type *d = (type *)(runs->p[0] + (int64_t)r * runs->row[0]);          \
        const type *s =                                                      \
            (const type *)(runs->p[1] + (int64_t)r * runs->row[1]);          \
        int64_t j = 0;                                                       \
                                                                             \
        if (sd == 1 && ss == 1) {                                            \
            for (; j + 8 <= n; j += 8) {                                     \
                memcpy(d + j, s + j, 8 * sizeof(type));                      \
            }                                                                \
        }                                                                    \
        for (; j < n; j++) {                                                 \
            d[j * sd] = s[j * ss];                                           \
        }                                                                    \
    }                                                                        \
}
TRN_COPY_BITS_RUN(trn_copy_bits_1, uint8_t)
TRN_COPY_BITS_RUN(trn_copy_bits_2, uint16_t)
TRN_COPY_BITS_RUN(trn_copy_bits_4, uint32_t)
TRN_COPY_BITS_RUN(trn_copy_bits_8, uint64_t)

static uint32_t trn_ew_copy_bits(TrnKernel *k, TrnEw *e)
{
    const TrnView *views[2] = { &e->dst, &e->src[0] };
    TrnRunFn *fn;
    TrnIter it;

    switch (e->dst.esize) {
    case 1:
        fn = trn_copy_bits_1;
        break;
    case 2:
        fn = trn_copy_bits_2;
        break;
    case 4:
        fn = trn_copy_bits_4;
        break;
    default:
        assert(e->dst.esize == 8);
        fn = trn_copy_bits_8;
        break;
    }
    trn_iter_init(&it, views, 2);
    return trn_iter_runs_shared(k, &it, fn, NULL);
}

uint32_t trn_insn_elementwise(TrnKernel *k, const struct nisa_insn *in)
{
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
    /* Complex operands: their own engine, but a COPY of bits. */
    if (trn_ew_is_complex(e) &&
        (e->op != NISA_INSN_COPY || e->src[0].dtype != e->dst.dtype)) {
        return trn_ew_complex(k, e);
    }
    e->integer = trn_ew_integer(e);
    if (trn_ew_bitwise(e) && !e->integer) {
        return trn_bad_insn(k, "bitwise operation on a non-integer operand");
    }
    return trn_ew_run(k, e);
}

uint32_t trn_ew_run(TrnKernel *k, TrnEw *e)
{
    g_autofree TrnEwBufs *buf = NULL;
    uint32_t err;

    if (!e->dst.numel) {
        return NISA_ERR_NONE;
    }
    if (e->op == NISA_INSN_COPY && e->src[0].dtype == e->dst.dtype) {
        return e->src[0].contiguous && e->dst.contiguous
               ? trn_ew_memmove(k, e) : trn_ew_copy_bits(k, e);
    }
    if (!e->integer && trn_ew_f32(k, e, &err)) {
        return err;
    }

    buf = g_new(TrnEwBufs, 1);
    err = trn_ew_check_divisors(k, e, buf);
    if (err) {
        return err;
    }
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
