/*
 * Virtual Trainium accelerator: tensor operands -- validation against the
 * buffer table, element conversion and strided chunk access.
 *
 * Numerics (docs/hardware.md, "Numerics"): an instruction whose operands
 * are all integers (I32, I64, BOOL) computes on exact int64 (the *_i64
 * helpers); otherwise elements are converted to double (exactly, except
 * int64 beyond 2^53), computed on, and rounded once to the destination
 * type: float32
 * round-to-nearest-even; bfloat16 through float32 then round-to-nearest-even
 * (which is what a float32 computation followed by a bf16 store gives);
 * float16 likewise through float32 then round-to-nearest-even (subnormals
 * kept, overflow to infinity); I32 and I64 truncate toward zero and
 * saturate, NaN becoming 0; the small integers truncate toward zero to
 * int64 (U8) or int32 (I8, I16) and wrap modulo 2^width, NaN, infinities
 * and values beyond that intermediate becoming 0 (PyTorch's CPU casts on
 * x86); bool is
 * "not zero". A NaN stored as a float is the quiet NaN 0x7fc00000 (bf16
 * 0x7fc0, f16 0x7e00), with its sign.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "trainium-isa.h"

double trn_f64(uint64_t bits)
{
    double d;

    memcpy(&d, &bits, sizeof(d));
    return d;
}

/*
 * Check @t against its slot and describe it in @v. Everything is checked
 * before the instruction touches memory: the element count and the byte
 * extent are computed without overflow, and the lowest and highest byte
 * any index reaches must lie inside the slot, empty operands included.
 */
uint32_t trn_view_init(TrnKernel *k, const struct nisa_tensor *t,
                       uint32_t access, TrnView *v)
{
    unsigned nd = t->ndim, first, d;
    __int128 lo = 0, hi = 0, off = le64_to_cpu(t->offset), start, end;
    uint64_t bound = 1;
    const TrnSlot *slot;
    int64_t expect;

    if (t->rsvd0 || t->rsvd1 || nd > NISA_MAX_DIMS ||
        t->dtype >= NISA_NUM_DTYPES) {
        return trn_bad_insn(k, "malformed tensor operand");
    }
    for (d = nd; d < NISA_MAX_DIMS; d++) {
        if (t->shape[d] || t->strides[d]) {
            return trn_bad_insn(k, "shape or stride set past ndim");
        }
    }
    if (t->slot >= k->nslots) {
        return NISA_ERR_BAD_SLOT;
    }
    slot = &k->slots[t->slot];
    if ((slot->access & access) != access) {
        return NISA_ERR_ACCESS;
    }

    memset(v, 0, sizeof(*v));
    v->dtype = t->dtype;
    v->esize = nisa_dtype_size(t->dtype);
    v->numel = 1;
    if (off % v->esize) {
        return trn_bad_insn(k, "operand offset not a multiple of its element size");
    }
    /* Right-align: the last dimension is always index 3. */
    first = NISA_MAX_DIMS - nd;
    for (d = 0; d < NISA_MAX_DIMS; d++) {
        v->shape[d] = 1;
        v->stride[d] = 0;
    }
    for (d = 0; d < nd; d++) {
        v->shape[first + d] = le32_to_cpu(t->shape[d]);
        v->stride[first + d] = (int64_t)le64_to_cpu(t->strides[d]);
    }
    /*
     * The count, checked for overflow (2^17 * 2^17 * 2^30 is 0 modulo
     * 2^64). An extent of 0 counts as 1 in the bound, which so bounds
     * every product of extents a caller forms (outer, inner...); the
     * element count itself is at most the bound.
     */
    for (d = 0; d < NISA_MAX_DIMS; d++) {
        if (umul64_overflow(bound, MAX(v->shape[d], 1), &bound) ||
            bound > NISA_MAX_ELEMS) {
            return trn_bad_insn(k, "operand has too many elements");
        }
        v->numel *= v->shape[d];
    }
    for (d = 0; d < NISA_MAX_DIMS && v->numel; d++) {
        /* |(2^32 - 1) * s| < 2^95: four of them fit an __int128. */
        __int128 ext = (__int128)(v->shape[d] - 1) * v->stride[d];

        if (ext > 0) {
            hi += ext;
        } else {
            lo += ext;
        }
    }
    /* An empty operand reaches no byte: [off, off) must be in the slot. */
    start = off + lo * v->esize;
    end = v->numel ? off + (hi + 1) * v->esize : off;
    if (start < 0 || end > (__int128)slot->size) {
        return NISA_ERR_SLOT_RANGE;
    }
    v->data = k->s->mem_ptr + slot->base + (uint64_t)off;
    if ((access & TRN_WRITE) && v->numel) {
        /* For migration: what the instruction may write becomes dirty. */
        uint64_t a = slot->base + (uint64_t)start;
        uint64_t b = slot->base + (uint64_t)end;

        if (k->dirty_hi <= k->dirty_lo) {
            k->dirty_lo = a;
            k->dirty_hi = b;
        } else {
            k->dirty_lo = MIN(k->dirty_lo, a);
            k->dirty_hi = MAX(k->dirty_hi, b);
        }
    }

    v->contiguous = true;
    expect = 1;
    for (d = NISA_MAX_DIMS; d-- > 0;) {
        if (v->shape[d] != 1 && v->stride[d] != expect) {
            v->contiguous = false;
        }
        expect *= (int64_t)v->shape[d];
    }
    return NISA_ERR_NONE;
}

bool trn_same_shape(const TrnView *a, const TrnView *b)
{
    return !memcmp(a->shape, b->shape, sizeof(a->shape));
}

void trn_byte_span(uint8_t *data, unsigned esize, const uint64_t *shape,
                   const int64_t *stride, unsigned ndim, uint8_t **lo,
                   uint8_t **hi)
{
    int64_t l = 0, h = 0;

    for (unsigned d = 0; d < ndim; d++) {
        int64_t e = (int64_t)(shape[d] - 1) * stride[d];

        if (e > 0) {
            h += e;
        } else {
            l += e;
        }
    }
    *lo = data + l * (int64_t)esize;
    *hi = data + (h + 1) * (int64_t)esize;
}

bool trn_strides_nest(const uint64_t *shape, const int64_t *stride,
                      unsigned ndim)
{
    uint64_t st[NISA_MAX_DIMS], ex[NISA_MAX_DIMS], span = 1;
    unsigned n = 0;

    for (unsigned d = 0; d < ndim && d < NISA_MAX_DIMS; d++) {
        if (shape[d] > 1) {
            st[n] = stride[d] < 0 ? -(uint64_t)stride[d] : (uint64_t)stride[d];
            ex[n++] = shape[d];
        }
    }
    for (unsigned a = 1; a < n; a++) {       /* by stride */
        for (unsigned b = a; b > 0 && st[b - 1] > st[b]; b--) {
            uint64_t t = st[b], e = ex[b];

            st[b] = st[b - 1];
            ex[b] = ex[b - 1];
            st[b - 1] = t;
            ex[b - 1] = e;
        }
    }
    for (unsigned a = 0; a < n; a++) {
        if (st[a] < span) {
            return false;
        }
        span = st[a] * ex[a];
    }
    return true;
}

bool trn_overlap(const TrnView *a, const TrnView *b)
{
    uint8_t *alo, *ahi, *blo, *bhi;

    trn_byte_span(a->data, a->esize, a->shape, a->stride, NISA_MAX_DIMS,
                  &alo, &ahi);
    trn_byte_span(b->data, b->esize, b->shape, b->stride, NISA_MAX_DIMS,
                  &blo, &bhi);
    return alo < bhi && blo < ahi;
}

void *trn_elem(const TrnView *v, const uint64_t idx[NISA_MAX_DIMS])
{
    int64_t e = 0;

    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        e += (int64_t)idx[d] * v->stride[d];
    }
    return v->data + e * (int64_t)v->esize;
}

static inline float trn_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;

    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t trn_f32_to_bf16(float f)
{
    uint32_t u;

    memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000) {
        return 0x7fc0 | ((u >> 16) & 0x8000);
    }
    u += 0x7fff + ((u >> 16) & 1);
    return u >> 16;
}

/* IEEE binary16 to double: exact. */
static double trn_f16_to_f64(uint16_t h)
{
    unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double mag;

    if (e == 0x1f) {
        mag = m ? NAN : INFINITY;
    } else if (e == 0) {
        mag = ldexp(m, -24);                    /* subnormal: m * 2^-24 */
    } else {
        mag = ldexp(m | 0x400, (int)e - 25);    /* 1.m * 2^(e - 15) */
    }
    return (h & 0x8000) ? -mag : mag;
}

/* float32 to IEEE binary16, round to nearest, ties to even. */
static uint16_t trn_f32_to_f16(float f)
{
    uint32_t u, a, m;
    uint16_t sign;
    unsigned shift;

    memcpy(&u, &f, 4);
    sign = (u >> 16) & 0x8000;
    a = u & 0x7fffffff;
    if (a > 0x7f800000) {
        return sign | 0x7e00;                   /* quiet NaN, signed */
    }
    if (a >= 0x477ff000) {
        return sign | 0x7c00;                   /* >= 65520 (or inf): inf */
    }
    if (a >= 0x38800000) {
        /*
         * Normal in f16 (>= 2^-14): rebias the exponent (127 - 15 = 112)
         * and drop 13 significand bits, adding just under half of the
         * dropped unit plus the kept LSB, which rounds ties to even; a
         * carry out of the significand bumps the exponent, as it should.
         */
        a -= 112u << 23;
        return sign | (uint16_t)((a + 0xfff + ((a >> 13) & 1)) >> 13);
    }
    if (a < 0x00800000) {
        return sign;                            /* f32 subnormal: < 2^-126 */
    }
    /*
     * Subnormal in f16: the result is |f| / 2^-24 rounded, i.e. the full
     * significand m (2^23 <= m < 2^24, |f| = m * 2^(e - 150)) shifted
     * right by 126 - e >= 14 bits; at 25 bits or more it is below half.
     */
    shift = 126 - (a >> 23);
    if (shift > 24) {
        return sign;
    }
    m = (a & 0x7fffff) | 0x800000;
    {
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);

        if (rem > half || (rem == half && (r & 1))) {
            r++;                                /* may reach 0x400: 2^-14 */
        }
        return sign | (uint16_t)r;
    }
}

/*
 * The small integers from a float: truncate toward zero to an integer of
 * @limit (2^31 or 2^63) and wrap; NaN, infinities and values beyond the
 * limit give 0. This is what PyTorch's CPU casts give on x86: uint8 goes
 * through int64, int8 and int16 through int32, and x86 makes an
 * unrepresentable value 0x80000000(00000000), whose low bits are 0.
 */
static int64_t trn_to_small_int(double x, double limit)
{
    if (!(x > -limit - 1.0 && x < limit)) {
        return 0;
    }
    return (int64_t)x;
}

static inline int64_t trn_to_int(double x, double lo, double hi)
{
    if (isnan(x)) {
        return 0;
    }
    if (x <= lo) {
        return (int64_t)lo;
    }
    if (x >= hi) {
        /* (double)INT64_MAX is 2^63, which int64_t cannot hold. */
        return hi >= 9223372036854775807.0 ? INT64_MAX : (int64_t)hi;
    }
    return (int64_t)x;
}

double trn_load(uint8_t dtype, const void *p)
{
    switch (dtype) {
    case NISA_F32: {
        uint32_t u = ldl_le_p(p);
        float f;

        memcpy(&f, &u, 4);
        return f;
    }
    case NISA_BF16:
        return trn_bf16_to_f32(lduw_le_p(p));
    case NISA_I32:
        return (int32_t)ldl_le_p(p);
    case NISA_I64:
        return (double)(int64_t)ldq_le_p(p);
    case NISA_F16:
        return trn_f16_to_f64(lduw_le_p(p));
    case NISA_U8:
        return *(const uint8_t *)p;
    case NISA_I8:
        return *(const int8_t *)p;
    case NISA_I16:
        return (int16_t)lduw_le_p(p);
    case NISA_F64: {
        uint64_t u = ldq_le_p(p);
        double d;

        memcpy(&d, &u, 8);
        return d;
    }
    case NISA_C64:
        /*
         * The real part: what a complex-to-real COPY keeps. Only the
         * complex engine (trainium-ew-complex.c) meets complex operands
         * (trn_insn_exec()'s gate); it uses this for that COPY.
         */
        return trn_load(NISA_F32, p);
    case NISA_BOOL:
    default:
        return *(const uint8_t *)p != 0;
    }
}

void trn_store(uint8_t dtype, void *p, double x)
{
    switch (dtype) {
    case NISA_F32: {
        float f = trn_to_f32(x);

        memcpy(p, &f, 4);
        break;
    }
    case NISA_BF16:
        stw_le_p(p, trn_f32_to_bf16(trn_to_f32(x)));
        break;
    case NISA_I32:
        stl_le_p(p, (uint32_t)trn_to_int(x, INT32_MIN, INT32_MAX));
        break;
    case NISA_I64:
        stq_le_p(p, (uint64_t)trn_to_int(x, -9223372036854775808.0,
                                         9223372036854775807.0));
        break;
    case NISA_F16:
        stw_le_p(p, trn_f32_to_f16(trn_to_f32(x)));
        break;
    case NISA_U8:
        *(uint8_t *)p = (uint8_t)trn_to_small_int(x, 9223372036854775808.0);
        break;
    case NISA_I8:
        *(uint8_t *)p = (uint8_t)trn_to_small_int(x, 2147483648.0);
        break;
    case NISA_I16:
        stw_le_p(p, (uint16_t)trn_to_small_int(x, 2147483648.0));
        break;
    case NISA_F64: {
        uint64_t u;

        memcpy(&u, &x, 8);
        stq_le_p(p, u);
        break;
    }
    case NISA_C64:
        /* A real number is the complex number of imaginary part 0. */
        trn_store(NISA_F32, p, x);
        trn_store(NISA_F32, (uint8_t *)p + 4, 0.0);
        break;
    case NISA_BOOL:
    default:
        *(uint8_t *)p = x != 0;
        break;
    }
}

/* Coordinates of element @linear in row-major order of @v's shape. */
static void trn_coords(const TrnView *v, uint64_t linear,
                       uint64_t idx[NISA_MAX_DIMS])
{
    for (unsigned d = NISA_MAX_DIMS; d-- > 0;) {
        idx[d] = linear % v->shape[d];
        linear /= v->shape[d];
    }
}

/*
 * Walk @n elements from @start: @fn handles runs along the last dimension
 * (pointer, stride in elements, count, position in the caller's buffer).
 */
#define TRN_WALK(v, start, n, RUN)                                          \
    do {                                                                    \
        uint64_t idx_[NISA_MAX_DIMS], done_ = 0;                             \
        trn_coords((v), (start), idx_);                                     \
        while (done_ < (n)) {                                               \
            uint64_t cnt_ = MIN((n) - done_, (v)->shape[3] - idx_[3]);      \
            uint8_t *p_ = trn_elem((v), idx_);                              \
            int64_t st_ = (v)->stride[3];                                   \
            RUN(p_, st_, cnt_, done_);                                      \
            done_ += cnt_;                                                  \
            idx_[3] += cnt_;                                                \
            for (unsigned d_ = NISA_MAX_DIMS - 1;                            \
                 d_ > 0 && idx_[d_] == (v)->shape[d_]; d_--) {              \
                idx_[d_] = 0;                                               \
                idx_[d_ - 1]++;                                             \
            }                                                               \
        }                                                                   \
    } while (0)

void trn_gather(const TrnView *v, uint64_t start, uint64_t n, double *out)
{
#define GATHER_RUN(p, st, cnt, pos)                                         \
    do {                                                                    \
        double *o = out + (pos);                                            \
        if (v->dtype == NISA_F32) {                                          \
            const float *f = (const float *)(p);                            \
            if ((st) == 1) {                                                \
                for (uint64_t j = 0; j < (cnt); j++) {                      \
                    o[j] = f[j];                                            \
                }                                                           \
            } else if ((st) == 0) {     /* a broadcast: one value */        \
                double v_ = f[0];                                           \
                for (uint64_t j = 0; j < (cnt); j++) {                      \
                    o[j] = v_;                                              \
                }                                                           \
            } else {                                                        \
                for (uint64_t j = 0; j < (cnt); j++) {                      \
                    o[j] = f[(int64_t)j * (st)];                            \
                }                                                           \
            }                                                               \
        } else if (v->dtype == NISA_F64) {                                   \
            const double *d = (const double *)(p);                          \
            for (uint64_t j = 0; j < (cnt); j++) {                          \
                o[j] = d[(int64_t)j * (st)];                                \
            }                                                               \
        } else {                                                            \
            for (uint64_t j = 0; j < (cnt); j++) {                          \
                o[j] = trn_load(v->dtype,                                   \
                                (p) + (int64_t)j * (st) * (int64_t)v->esize); \
            }                                                               \
        }                                                                   \
    } while (0)
    TRN_WALK(v, start, n, GATHER_RUN);
#undef GATHER_RUN
}

void trn_scatter(const TrnView *v, uint64_t start, uint64_t n,
                 const double *in)
{
#define SCATTER_RUN(p, st, cnt, pos)                                        \
    do {                                                                    \
        const double *s = in + (pos);                                       \
        if (v->dtype == NISA_F32) {                                          \
            float *f = (float *)(p);                                        \
            for (uint64_t j = 0; j < (cnt); j++) {                          \
                f[(int64_t)j * (st)] = trn_to_f32(s[j]);                    \
            }                                                               \
        } else if (v->dtype == NISA_F64) {                                   \
            double *d = (double *)(p);                                      \
            for (uint64_t j = 0; j < (cnt); j++) {                          \
                d[(int64_t)j * (st)] = s[j];                                \
            }                                                               \
        } else {                                                            \
            for (uint64_t j = 0; j < (cnt); j++) {                          \
                trn_store(v->dtype,                                         \
                          (p) + (int64_t)j * (st) * (int64_t)v->esize, s[j]); \
            }                                                               \
        }                                                                   \
    } while (0)
    TRN_WALK(v, start, n, SCATTER_RUN);
#undef SCATTER_RUN
}

/* @n copies of @v at @o, four to a store. */
static void trn_fill_f32(float *o, float v, uint64_t n)
{
    typedef float TrnV4fs __attribute__((vector_size(16)));
    TrnV4fs vv = { v, v, v, v };
    uint64_t j = 0;

    for (; j + 4 <= n; j += 4) {
        memcpy(o + j, &vv, sizeof(vv));
    }
    for (; j < n; j++) {
        o[j] = v;
    }
}

void trn_gather_f32(const TrnView *v, uint64_t start, uint64_t n, float *out)
{
#define GATHER_F32_RUN(p, st, cnt, pos)                                     \
    do {                                                                    \
        const float *f_ = (const float *)(p);                               \
        float *o_ = out + (pos);                                            \
        if ((st) == 1) {                                                    \
            memcpy(o_, f_, (cnt) * sizeof(float));                          \
        } else if ((st) == 0) {         /* a broadcast: one value */        \
            trn_fill_f32(o_, f_[0], (cnt));                                 \
        } else {                                                            \
            for (uint64_t j = 0; j < (cnt); j++) {                          \
                o_[j] = f_[(int64_t)j * (st)];                              \
            }                                                               \
        }                                                                   \
    } while (0)
    TRN_WALK(v, start, n, GATHER_F32_RUN);
#undef GATHER_F32_RUN
}

/* A float32 stored as trn_to_f32() stores it: a NaN the quiet NaN. */
static inline uint32_t trn_f32_bits_quiet(float f)
{
    uint32_t u;

    memcpy(&u, &f, 4);
    return (u & 0x7fffffff) > 0x7f800000 ? (u & 0x80000000) | 0x7fc00000 : u;
}

void trn_scatter_f32(const TrnView *v, uint64_t start, uint64_t n,
                     const float *in)
{
#define SCATTER_F32_RUN(p, st, cnt, pos)                                    \
    do {                                                                    \
        uint32_t *u_ = (uint32_t *)(p);                                     \
        const float *s_ = in + (pos);                                       \
        uint64_t j = 0;                                                     \
        if ((st) == 1) {                                                    \
            for (; j + 8 <= (cnt); j += 8) {                                \
                uint32_t t_[8];                                             \
                for (unsigned k_ = 0; k_ < 8; k_++) {                       \
                    t_[k_] = trn_f32_bits_quiet(s_[j + k_]);                \
                }                                                           \
                memcpy(u_ + j, t_, sizeof(t_));                             \
            }                                                               \
        }                                                                   \
        for (; j < (cnt); j++) {                                            \
            u_[(int64_t)j * (st)] = trn_f32_bits_quiet(s_[j]);              \
        }                                                                   \
    } while (0)
    TRN_WALK(v, start, n, SCATTER_F32_RUN);
#undef SCATTER_F32_RUN
}

int64_t trn_load_i64(uint8_t dtype, const void *p)
{
    switch (dtype) {
    case NISA_I32:
        return (int32_t)ldl_le_p(p);
    case NISA_I64:
        return (int64_t)ldq_le_p(p);
    case NISA_BOOL:
        return *(const uint8_t *)p != 0;
    case NISA_U8:
        return *(const uint8_t *)p;
    case NISA_I8:
        return *(const int8_t *)p;
    case NISA_I16:
        return (int16_t)lduw_le_p(p);
    default:
        /* Not an integer type: through double, truncating (saturated). */
        return trn_to_int(trn_load(dtype, p), -9223372036854775808.0,
                          9223372036854775807.0);
    }
}

void trn_store_i64(uint8_t dtype, void *p, int64_t x, bool wrap)
{
    switch (dtype) {
    case NISA_I32:
        if (!wrap) {
            x = MIN(MAX(x, INT32_MIN), INT32_MAX);
        }
        stl_le_p(p, (uint32_t)x);
        break;
    case NISA_I64:
        stq_le_p(p, (uint64_t)x);
        break;
    case NISA_BOOL:
        *(uint8_t *)p = x != 0;
        break;
    case NISA_U8:
    case NISA_I8:
        /* The small integers always wrap (docs/hardware.md, "Numerics"). */
        *(uint8_t *)p = (uint8_t)x;
        break;
    case NISA_I16:
        stw_le_p(p, (uint16_t)x);
        break;
    case NISA_F32: {
        /* One rounding, int64 to float32 directly. */
        float f = (float)x;

        memcpy(p, &f, 4);
        break;
    }
    case NISA_F64:
        trn_store(dtype, p, (double)x);     /* one rounding */
        break;
    case NISA_C64:      /* float32 real part, imaginary 0: one rounding */
    default:
        trn_store(dtype, p, (double)(float)x);
        break;
    }
}

void trn_gather_i64(const TrnView *v, uint64_t start, uint64_t n,
                    int64_t *out)
{
#define GATHER_I64_RUN(p, st, cnt, pos)                                     \
    do {                                                                    \
        for (uint64_t j = 0; j < (cnt); j++) {                              \
            out[(pos) + j] = trn_load_i64(                                  \
                v->dtype, (p) + (int64_t)j * (st) * (int64_t)v->esize);     \
        }                                                                   \
    } while (0)
    TRN_WALK(v, start, n, GATHER_I64_RUN);
#undef GATHER_I64_RUN
}

void trn_scatter_i64(const TrnView *v, uint64_t start, uint64_t n,
                     const int64_t *in, bool wrap)
{
#define SCATTER_I64_RUN(p, st, cnt, pos)                                    \
    do {                                                                    \
        for (uint64_t j = 0; j < (cnt); j++) {                              \
            trn_store_i64(v->dtype, (p) + (int64_t)j * (st) *               \
                          (int64_t)v->esize, in[(pos) + j], wrap);          \
        }                                                                   \
    } while (0)
    TRN_WALK(v, start, n, SCATTER_I64_RUN);
#undef SCATTER_I64_RUN
}
