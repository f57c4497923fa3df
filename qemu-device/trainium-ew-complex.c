/*
 * Virtual Trainium accelerator: elementwise instructions with a complex64
 * operand (docs/hardware.md, "Complex numbers"). trn_insn_exec() has let
 * through only the functions nisa_takes_complex() lists; a real operand
 * is the complex number of imaginary part 0. Each element is computed in
 * double (C99 <complex.h> for the transcendental functions, the plain
 * formulas elsewhere, as PyTorch's CPU kernels write them) and each part
 * of the result rounded once to float32, so that a result is what the
 * CPU's complex64 gives within float32 rounding.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <complex.h>
#include "trainium-isa.h"
#include "trainium-ew.h"
#include "trainium-iter.h"

/* Elements per chunk: the operands are gathered, computed, scattered. */
#define TRN_CX_CHUNK TRN_CHUNK_ELEMS

/* One complex operand's chunk, as two arrays of doubles. */
typedef struct TrnCxBuf {
    double re[TRN_CX_CHUNK];
    double im[TRN_CX_CHUNK];
} TrnCxBuf;

typedef struct TrnCxBufs {
    TrnCxBuf src[3];
    TrnCxBuf out;
} TrnCxBufs;

/* Whether any operand of @e is complex: then it runs here. */
bool trn_ew_is_complex(const TrnEw *e)
{
    if (nisa_dtype_is_complex(e->dst.dtype)) {
        return true;
    }
    for (unsigned i = 0; i < e->nsrc; i++) {
        if (nisa_dtype_is_complex(e->src[i].dtype)) {
            return true;
        }
    }
    return false;
}

/* Coordinates of element @linear of @v, row-major. */
static void trn_cx_coords(const TrnView *v, uint64_t linear,
                          uint64_t idx[NISA_MAX_DIMS])
{
    for (unsigned d = NISA_MAX_DIMS; d-- > 0;) {
        idx[d] = linear % v->shape[d];
        linear /= v->shape[d];
    }
}

/* The next element's coordinates (row-major); its address offset changes. */
static void trn_cx_next(const TrnView *v, uint64_t idx[NISA_MAX_DIMS])
{
    for (unsigned d = NISA_MAX_DIMS; d-- > 0;) {
        if (++idx[d] < v->shape[d]) {
            return;
        }
        idx[d] = 0;
    }
}

/* Elements [@start, @start + @n) of @v, complex or real (imaginary 0). */
static void trn_cx_gather(const TrnView *v, uint64_t start, uint64_t n,
                          TrnCxBuf *b)
{
    uint64_t idx[NISA_MAX_DIMS];

    if (!nisa_dtype_is_complex(v->dtype)) {
        trn_gather(v, start, n, b->re);
        memset(b->im, 0, n * sizeof(double));
        return;
    }
    if (v->contiguous) {
        const uint8_t *p = v->data + start * 8;

        for (uint64_t j = 0; j < n; j++) {
            b->re[j] = trn_load(NISA_F32, p + 8 * j);
            b->im[j] = trn_load(NISA_F32, p + 8 * j + 4);
        }
        return;
    }
    trn_cx_coords(v, start, idx);
    for (uint64_t j = 0; j < n; j++) {
        const uint8_t *p = trn_elem(v, idx);

        b->re[j] = trn_load(NISA_F32, p);
        b->im[j] = trn_load(NISA_F32, p + 4);
        trn_cx_next(v, idx);
    }
}

/* Store a complex chunk, each part rounded once to float32. */
static void trn_cx_scatter(const TrnView *v, uint64_t start, uint64_t n,
                           const TrnCxBuf *b)
{
    uint64_t idx[NISA_MAX_DIMS];

    if (v->contiguous) {
        uint8_t *p = v->data + start * 8;

        for (uint64_t j = 0; j < n; j++) {
            trn_store(NISA_F32, p + 8 * j, b->re[j]);
            trn_store(NISA_F32, p + 8 * j + 4, b->im[j]);
        }
        return;
    }
    trn_cx_coords(v, start, idx);
    for (uint64_t j = 0; j < n; j++) {
        uint8_t *p = trn_elem(v, idx);

        trn_store(NISA_F32, p, b->re[j]);
        trn_store(NISA_F32, p + 4, b->im[j]);
        trn_cx_next(v, idx);
    }
}

/*
 * x / y as PyTorch's vectorized complex division computes it, in double:
 * ((ac + bd) + (bc - ad) i) / (c^2 + d^2). In double no float32 operand
 * overflows or underflows it, so the quotient is within a double rounding
 * of the exact one; a zero divisor gives NaN parts, as the CPU's does.
 */
static inline void trn_cx_div(double a, double b, double c, double d,
                              double *re, double *im)
{
    double den = c * c + d * d;

    *re = (a * c + b * d) / den;
    *im = (b * c - a * d) / den;
}

/*
 * log(1 + z) as c10's complex log1p, in double: the imaginary part
 * atan2(b, 1 + a); the real part log1p(a (2 + a) + b^2) / 2 when |z| < 1/2
 * (no cancellation in 1 + z near 0), else log(hypot(1 + a, b)).
 */
static inline void trn_cx_log1p(double a, double b, double *re, double *im)
{
    *im = atan2(b, a + 1);
    if (hypot(a, b) < 0.5) {
        double r = a * (2 + a) + b * b;

        *re = r == 0 ? a : 0.5 * log1p(r);
    } else {
        *re = log(hypot(a + 1, b));
    }
}

static inline void trn_cx_set(TrnCxBuf *o, uint64_t j, double complex z)
{
    o->re[j] = creal(z);
    o->im[j] = cimag(z);
}

/*
 * UNARY: the complex result in @o, or the real one (ABS, ANGLE, the
 * predicates) in o->re.
 */
static void trn_cx_unary(unsigned fn, const TrnCxBuf *x, TrnCxBuf *o,
                         uint64_t n)
{
    for (uint64_t j = 0; j < n; j++) {
        double a = x->re[j], b = x->im[j];
        double complex z = CMPLX(a, b);

        switch (fn) {    /* unsigned: only the listed functions */
        case NISA_UN_NEG:
            o->re[j] = -a;
            o->im[j] = -b;
            break;
        case NISA_UN_CONJ:
            o->re[j] = a;
            o->im[j] = -b;
            break;
        case NISA_UN_ABS:
            o->re[j] = hypot(a, b);
            break;
        case NISA_UN_ANGLE:
            o->re[j] = atan2(b, a);
            break;
        case NISA_UN_SQUARE:        /* z * z, as torch.square multiplies */
            o->re[j] = a * a - b * b;
            o->im[j] = a * b + b * a;
            break;
        case NISA_UN_RECIP:
            trn_cx_div(1.0, 0.0, a, b, &o->re[j], &o->im[j]);
            break;
        case NISA_UN_EXP:
            trn_cx_set(o, j, cexp(z));
            break;
        case NISA_UN_LOG:
            trn_cx_set(o, j, clog(z));
            break;
        case NISA_UN_SQRT:
            trn_cx_set(o, j, csqrt(z));
            break;
        case NISA_UN_SIN:
            trn_cx_set(o, j, csin(z));
            break;
        case NISA_UN_COS:
            trn_cx_set(o, j, ccos(z));
            break;
        case NISA_UN_TANH:
            trn_cx_set(o, j, ctanh(z));
            break;
        case NISA_UN_SIGMOID: {     /* 1 / (1 + exp(-z)), as PyTorch's */
            double complex e = cexp(-z);

            trn_cx_div(1.0, 0.0, 1.0 + creal(e), cimag(e), &o->re[j],
                       &o->im[j]);
            break;
        }
        case NISA_UN_TAN:
            trn_cx_set(o, j, ctan(z));
            break;
        case NISA_UN_ASIN:
            trn_cx_set(o, j, casin(z));
            break;
        case NISA_UN_ACOS:
            trn_cx_set(o, j, cacos(z));
            break;
        case NISA_UN_ATAN:
            trn_cx_set(o, j, catan(z));
            break;
        case NISA_UN_SINH:
            trn_cx_set(o, j, csinh(z));
            break;
        case NISA_UN_COSH:
            trn_cx_set(o, j, ccosh(z));
            break;
        case NISA_UN_ASINH:
            trn_cx_set(o, j, casinh(z));
            break;
        case NISA_UN_ACOSH:
            trn_cx_set(o, j, cacosh(z));
            break;
        case NISA_UN_ATANH:
            trn_cx_set(o, j, catanh(z));
            break;
        case NISA_UN_LOG2:          /* each part of log(z) / ln 2 */
        case NISA_UN_LOG10: {
            double complex l = clog(z);
            double d = fn == NISA_UN_LOG2 ? M_LN2 : M_LN10;

            o->re[j] = creal(l) / d;
            o->im[j] = cimag(l) / d;
            break;
        }
        case NISA_UN_LOG1P:
            trn_cx_log1p(a, b, &o->re[j], &o->im[j]);
            break;
        case NISA_UN_EXPM1: {       /* c10's formula, exact near 0 */
            double s = sin(b / 2);

            o->re[j] = expm1(a) * cos(b) - 2 * s * s;
            o->im[j] = exp(a) * sin(b);
            break;
        }
        case NISA_UN_RSQRT: {       /* 1 / sqrt(z), the division as RECIP */
            double complex r = csqrt(z);

            trn_cx_div(1.0, 0.0, creal(r), cimag(r), &o->re[j], &o->im[j]);
            break;
        }
        case NISA_UN_EXP2:          /* exp(ln 2 z), as PyTorch's exp2_impl */
            trn_cx_set(o, j, cexp(CMPLX(M_LN2 * a, M_LN2 * b)));
            break;
        case NISA_UN_ISNAN:
            o->re[j] = isnan(a) || isnan(b);
            break;
        case NISA_UN_ISINF:
            o->re[j] = isinf(a) || isinf(b);
            break;
        case NISA_UN_ISFINITE:
            o->re[j] = isfinite(a) && isfinite(b);
            break;
        default:
            /* trn_cx_check() admitted only the functions above. */
            g_assert_not_reached();
        }
    }
}

/* Whether UNARY @fn of a complex operand gives a real number. */
static bool trn_cx_unary_real(unsigned fn)
{
    return fn == NISA_UN_ABS || fn == NISA_UN_ANGLE ||
           fn == NISA_UN_ISNAN || fn == NISA_UN_ISINF ||
           fn == NISA_UN_ISFINITE;
}

/* BINARY x op (alpha y), alpha real (ADD, SUB); y already swapped. */
static void trn_cx_binary(unsigned op, double alpha, const TrnCxBuf *x,
                          const TrnCxBuf *y, TrnCxBuf *o, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++) {
        double a = x->re[j], b = x->im[j], c = y->re[j], d = y->im[j];

        switch (op) {
        case NISA_BIN_ADD:
            o->re[j] = a + alpha * c;
            o->im[j] = b + alpha * d;
            break;
        case NISA_BIN_SUB:
            o->re[j] = a - alpha * c;
            o->im[j] = b - alpha * d;
            break;
        case NISA_BIN_MUL:
            /* Not C's *: Annex G's NaN recovery is not what PyTorch does. */
            o->re[j] = a * c - b * d;
            o->im[j] = a * d + b * c;
            break;
        case NISA_BIN_DIV:
            trn_cx_div(a, b, c, d, &o->re[j], &o->im[j]);
            break;
        default:
            g_assert_not_reached(); /* trn_cx_check() */
        }
    }
}

/*
 * What nisa_takes_complex() admits but the complex engine does not take:
 * operand types that make no sense for the function (a complex WHERE
 * condition, a real result of a complex function that gives a complex
 * one...). Logged, NISA_ERR_BAD_INSN.
 */
static uint32_t trn_cx_check(TrnKernel *k, const TrnEw *e)
{
    bool dst_cx = nisa_dtype_is_complex(e->dst.dtype);

    switch (e->op) {
    case NISA_INSN_FILL:
    case NISA_INSN_COPY:
        return NISA_ERR_NONE;
    case NISA_INSN_UNARY:
        if (trn_cx_unary_real(e->sub) && dst_cx) {
            return trn_bad_insn(k, "complex64 UNARY: abs, angle and the "
                                "predicates write a real dst");
        }
        if (!trn_cx_unary_real(e->sub) && !dst_cx) {
            return trn_bad_insn(k, "complex64 UNARY: this function writes a "
                                "complex64 dst");
        }
        return NISA_ERR_NONE;
    case NISA_INSN_BINARY:
        return dst_cx ? NISA_ERR_NONE :
               trn_bad_insn(k, "complex64 BINARY: dst is not complex64");
    case NISA_INSN_COMPARE:
        return !dst_cx ? NISA_ERR_NONE :
               trn_bad_insn(k, "complex64 COMPARE: dst is complex64");
    case NISA_INSN_WHERE:
        if (nisa_dtype_is_complex(e->src[0].dtype)) {
            return trn_bad_insn(k, "complex64 WHERE: the condition is "
                                "complex64");
        }
        return dst_cx ? NISA_ERR_NONE :
               trn_bad_insn(k, "complex64 WHERE: dst is not complex64");
    TRN_NOT_ELEMENTWISE:
    default:
        /* trn_insn_exec()'s gate: nothing else takes complex. */
        return trn_bad_insn(k, "complex64 operand of a function that does "
                            "not take complex");
    }
}

/* One chunk of @n elements from @start. */
static void trn_cx_chunk(const TrnEw *e, TrnCxBufs *b, uint64_t start,
                         uint64_t n)
{
    const TrnCxBuf *x = &b->src[0], *y = &b->src[1];
    TrnCxBuf *o = &b->out;
    bool real_out = !nisa_dtype_is_complex(e->dst.dtype);

    for (unsigned i = 0; i < e->nsrc; i++) {
        trn_cx_gather(&e->src[i], start, n, &b->src[i]);
    }
    switch (e->op) {
    case NISA_INSN_FILL:
        for (uint64_t j = 0; j < n; j++) {
            o->re[j] = e->scalar;
            o->im[j] = e->alpha;
        }
        break;
    case NISA_INSN_COPY:
        o = &b->src[0];     /* a real dst keeps the real part */
        if (e->dst.dtype == NISA_BOOL) {
            /* But bool: either part non-zero, as PyTorch's cast. */
            for (uint64_t j = 0; j < n; j++) {
                b->out.re[j] = x->re[j] != 0 || x->im[j] != 0;
            }
            o = &b->out;
        }
        break;
    case NISA_INSN_UNARY:
        trn_cx_unary(e->sub, x, o, n);
        break;
    case NISA_INSN_BINARY:
    case NISA_INSN_COMPARE:
        if (e->flags & NISA_IF_SCALAR) {
            for (uint64_t j = 0; j < n; j++) {
                b->src[1].re[j] = e->scalar;
                b->src[1].im[j] = 0.0;
            }
        }
        if (e->flags & NISA_IF_REVERSE) {
            x = &b->src[1];
            y = &b->src[0];
        }
        if (e->op == NISA_INSN_BINARY) {
            trn_cx_binary(e->sub, e->alpha, x, y, o, n);
            break;
        }
        for (uint64_t j = 0; j < n; j++) {
            bool eq = x->re[j] == y->re[j] && x->im[j] == y->im[j];

            o->re[j] = e->sub == NISA_CMP_EQ ? eq : !eq;
        }
        break;
    case NISA_INSN_WHERE:
        for (uint64_t j = 0; j < n; j++) {
            const TrnCxBuf *s = x->re[j] != 0 ? &b->src[1] : &b->src[2];

            o->re[j] = s->re[j];
            o->im[j] = s->im[j];
        }
        break;
    TRN_NOT_ELEMENTWISE:
    default:
        g_assert_not_reached(); /* trn_cx_check() */
    }
    if (real_out) {
        trn_scatter(&e->dst, start, n, o->re);
    } else {
        trn_cx_scatter(&e->dst, start, n, o);
    }
}

/*
 * A large instruction is shared by the card's threads (trn_pool_run()) in
 * pieces of TRN_ITER_SHARE_PIECE elements, as the real engine shares its
 * walks: only when dst writes each element once and overlaps no source
 * but exactly (in place), so that the pieces are independent and the
 * results the same bits with any number of threads.
 */
typedef struct TrnCxShare {
    const TrnEw *e;
    TrnCxBufs **bufs;       /* per worker, made by the worker */
} TrnCxShare;

static void trn_cx_piece(void *arg, unsigned w, uint64_t i)
{
    TrnCxShare *sh = arg;
    uint64_t start = i * TRN_ITER_SHARE_PIECE;
    uint64_t end = MIN(start + TRN_ITER_SHARE_PIECE, sh->e->dst.numel);

    if (!sh->bufs[w]) {
        sh->bufs[w] = g_new(TrnCxBufs, 1);
    }
    for (; start < end; start += TRN_CX_CHUNK) {
        trn_cx_chunk(sh->e, sh->bufs[w], start, MIN(TRN_CX_CHUNK, end - start));
    }
}

static bool trn_cx_independent(const TrnEw *e)
{
    if (!trn_strides_nest(e->dst.shape, e->dst.stride, NISA_MAX_DIMS)) {
        return false;
    }
    for (unsigned i = 0; i < e->nsrc; i++) {
        const TrnView *v = &e->src[i];
        bool same = v->data == e->dst.data && v->esize == e->dst.esize &&
                    trn_same_shape(v, &e->dst) &&
                    !memcmp(v->stride, e->dst.stride, sizeof(v->stride));

        if (!same && trn_overlap(v, &e->dst)) {
            return false;
        }
    }
    return true;
}

static uint32_t trn_cx_shared(TrnKernel *k, const TrnEw *e)
{
    unsigned workers = trn_pool_workers(k->s->pool);
    TrnCxShare sh = { e, g_new0(TrnCxBufs *, workers) };
    uint32_t err;

    err = trn_pool_run(k, DIV_ROUND_UP(e->dst.numel, TRN_ITER_SHARE_PIECE),
                       trn_cx_piece, &sh);
    for (unsigned w = 0; w < workers; w++) {
        g_free(sh.bufs[w]);
    }
    g_free(sh.bufs);
    return err;
}

uint32_t trn_ew_complex(TrnKernel *k, TrnEw *e)
{
    g_autofree TrnCxBufs *b = NULL;
    uint32_t err;

    err = trn_cx_check(k, e);
    if (err || !e->dst.numel) {
        return err;
    }
    /* @alpha scales src1 of ADD and SUB only; FILL's is the imaginary part. */
    if (e->op == NISA_INSN_BINARY && e->sub != NISA_BIN_ADD &&
        e->sub != NISA_BIN_SUB) {
        e->alpha = 1.0;
    }
    if (e->dst.numel >= TRN_ITER_SHARE_MIN && trn_cx_independent(e)) {
        return trn_cx_shared(k, e);
    }
    b = g_new(TrnCxBufs, 1);
    for (uint64_t start = 0; start < e->dst.numel; start += TRN_CX_CHUNK) {
        uint64_t n = MIN(TRN_CX_CHUNK, e->dst.numel - start);

        /* Several times a real element's work: the transcendentals. */
        if (trn_tick(k, 4 * n)) {
            return NISA_ERR_ABORTED;
        }
        trn_cx_chunk(e, b, start, n);
    }
    return NISA_ERR_NONE;
}
