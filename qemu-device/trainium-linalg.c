/*
 * Virtual Trainium accelerator: LINALG, dense linear algebra on the LAPACK
 * inside Debian's OpenBLAS (docs/hardware.md, "LINALG").
 *
 * Each batch entry's matrices are copied, through the element load/store
 * of trainium-tensor.c (so every floating dtype works), into column-major
 * float32 buffers (float64 ones, and LAPACK's d routines, when an operand
 * is F64), computed on there by one LAPACK (or BLAS) call, and
 * stored back. Every dimension is a guest value: all are checked against
 * NISA_LINALG_MAX_DIM, and every shape against the subop's contract, before
 * anything is allocated or LAPACK sees it (LAPACK's own argument checks are
 * never reached). A matrix LAPACK cannot factor is not an error of the
 * card: it shows in the info operand, or as NaN where there is none.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-linalg.h"

/* The NISA_IF_LA_* flags each subop takes (NISA_LINALG_OPS). */
#define LA_FLAGS_(NAME, name, s0, s1, s2, flags) [NISA_LA_##NAME] = (flags),
static const uint32_t la_flags[NISA_NUM_LINALG] = { NISA_LINALG_OPS(LA_FLAGS_) };

/* @v has the batch of src0 and an (@r x @c) matrix. */
static bool la_is(const La *la, const TrnView *v, uint64_t r, uint64_t c)
{
    return v->shape[0] == la->s[0].shape[0] &&
           v->shape[1] == la->s[0].shape[1] &&
           v->shape[2] == r && v->shape[3] == c;
}

static bool la_floating(const TrnView *v)
{
    return !trn_is_int(v->dtype);
}

/* In float64 (LAPACK's d routines): the destination or a source is F64. */
static bool la_wide(const La *la)
{
    return la->d.dtype == NISA_F64 || la->s[0].dtype == NISA_F64 ||
           la->s[1].dtype == NISA_F64 || la->s[2].dtype == NISA_F64;
}

static bool la_i32(const TrnView *v)
{
    return v->dtype == NISA_I32;
}

/*
 * Check every operand's shape and dtype for the subop; returns why not, or
 * NULL. Sets *@work to the float32 elements of the scratch buffers needed.
 */
static const char *la_check(La *la, uint16_t op, uint64_t *work)
{
    const TrnView *a = &la->s[0], *d = &la->d;
    uint64_t m = a->shape[2], n = a->shape[3], k = MIN(m, n);
    bool right = la->flags & NISA_IF_LA_RIGHT;
    bool novec = la->flags & NISA_IF_LA_NOVEC;

    if (op == NISA_LA_PERM) {
        uint64_t mm = d->shape[2];

        if (!la_i32(a) || m != 1 || n > mm || !la_is(la, d, mm, mm) ||
            !la_floating(d) || mm > NISA_LINALG_MAX_DIM) {
            return "PERM: src0 I32 [1, k], dst [m, m] with k <= m";
        }
        *work = mm * mm + n;
        return NULL;
    }
    if (!la_floating(a)) {
        return "src0 is not floating";
    }
    if (m > NISA_LINALG_MAX_DIM || n > NISA_LINALG_MAX_DIM) {
        return "matrix larger than NISA_LINALG_MAX_DIM";
    }
    for (unsigned i = 1; i < 3; i++) {
        const TrnView *s = &la->s[i];

        if (nisa_operand_access(NISA_INSN_LINALG, op, la->flags, 0,
                                i + 1) &&
            (s->shape[2] > NISA_LINALG_MAX_DIM ||
             s->shape[3] > NISA_LINALG_MAX_DIM)) {
            return "operand larger than NISA_LINALG_MAX_DIM";
        }
    }
    if (d->shape[2] > NISA_LINALG_MAX_DIM || d->shape[3] > NISA_LINALG_MAX_DIM) {
        return "dst larger than NISA_LINALG_MAX_DIM";
    }
    *work = m * n;
    switch ((enum nisa_linalg)op) {
    case NISA_LA_POTRF:
        if (m != n || !la_is(la, d, n, n) || !la_floating(d) ||
            !la_is(la, &la->s[1], 1, 1) || !la_i32(&la->s[1])) {
            return "POTRF: src0, dst [n, n], src1 I32 [1, 1]";
        }
        return NULL;
    case NISA_LA_GETRF:
        if (!la_is(la, d, m, n) || !la_floating(d) ||
            !la_is(la, &la->s[1], 1, k) || !la_i32(&la->s[1]) ||
            !la_is(la, &la->s[2], 1, 1) || !la_i32(&la->s[2])) {
            return "GETRF: dst [m, n], src1 I32 [1, k], src2 I32 [1, 1]";
        }
        return NULL;
    case NISA_LA_GETRS: {
        const TrnView *b = &la->s[2];

        if (m != n || !la_is(la, &la->s[1], 1, n) || !la_i32(&la->s[1]) ||
            !la_is(la, b, n, b->shape[3]) || !la_floating(b) ||
            !la_is(la, d, n, b->shape[3]) || !la_floating(d)) {
            return "GETRS: src0 [n, n], src1 I32 [1, n], src2 and dst [n, r]";
        }
        *work = n * n + n * b->shape[3];
        return NULL;
    }
    case NISA_LA_TRSM: {
        const TrnView *b = &la->s[1];
        uint64_t br = b->shape[2], bc = b->shape[3];

        if (m != n || !la_floating(b) || !la_is(la, b, br, bc) ||
            (right ? bc : br) != n || !la_is(la, d, br, bc) ||
            !la_floating(d)) {
            return "TRSM: src0 [n, n], src1 and dst [n, r] ([r, n] RIGHT)";
        }
        *work = n * n + br * bc;
        return NULL;
    }
    case NISA_LA_GEQRF:
        if (!la_is(la, d, m, n) || !la_floating(d) ||
            !la_is(la, &la->s[1], 1, k) || !la_floating(&la->s[1])) {
            return "GEQRF: dst [m, n], src1 [1, k]";
        }
        *work = m * n + k;
        return NULL;
    case NISA_LA_ORGQR: {
        uint64_t t = la->s[1].shape[3];

        if (m < n || t > n || !la_is(la, &la->s[1], 1, t) ||
            !la_floating(&la->s[1]) || !la_is(la, d, m, n) || !la_floating(d)) {
            return "ORGQR: src0 and dst [m, n] with m >= n, src1 [1, t <= n]";
        }
        *work = m * n + t;
        return NULL;
    }
    case NISA_LA_ORMQR: {
        const TrnView *c = &la->s[2];
        uint64_t t = la->s[1].shape[3], cm = c->shape[2], cn = c->shape[3];

        if (m != (right ? cn : cm) || t > m || t > n ||
            !la_is(la, &la->s[1], 1, t) || !la_floating(&la->s[1]) ||
            !la_is(la, c, cm, cn) || !la_floating(c) ||
            !la_is(la, d, cm, cn) || !la_floating(d)) {
            return "ORMQR: src0 [mq, n], src1 [1, t <= min(mq, n)], "
                   "src2 and dst [mq, r] ([r, mq] RIGHT)";
        }
        *work = m * n + t + cm * cn;
        return NULL;
    }
    case NISA_LA_GESDD: {
        bool full = la->flags & NISA_IF_LA_FULL;
        uint64_t uc = full ? m : k, vr = full ? n : k;

        if (!la_is(la, d, 1, k) || !la_floating(d)) {
            return "GESDD: dst [1, k]";
        }
        if (!novec && (!la_is(la, &la->s[1], m, uc) || !la_floating(&la->s[1]) ||
                       !la_is(la, &la->s[2], vr, n) ||
                       !la_floating(&la->s[2]))) {
            return "GESDD: src1 [m, k] ([m, m] FULL), src2 [k, n] ([n, n] FULL)";
        }
        *work = m * n + k + (novec ? 0 : m * uc + vr * n);
        return NULL;
    }
    case NISA_LA_SYEVD:
        if (m != n || !la_is(la, d, 1, n) || !la_floating(d) ||
            (!novec && (!la_is(la, &la->s[1], n, n) ||
                        !la_floating(&la->s[1])))) {
            return "SYEVD: src0 [n, n], dst [1, n], src1 [n, n]";
        }
        *work = n * n + n;
        return NULL;
    case NISA_LA_LUDET:
        if (m != n || !la_is(la, &la->s[1], 1, n) || !la_i32(&la->s[1]) ||
            !la_is(la, d, 1, 1) || !la_floating(d) ||
            ((la->flags & NISA_IF_LA_LOG) &&
             (!la_is(la, &la->s[2], 1, 1) || !la_floating(&la->s[2])))) {
            return "LUDET: src0 [n, n], src1 I32 [1, n], dst (src2) [1, 1]";
        }
        return NULL;
    case NISA_LA_SYTRF:
        if (m != n || !la_is(la, d, n, n) || !la_floating(d) ||
            !la_is(la, &la->s[1], 1, n) || !la_i32(&la->s[1]) ||
            !la_is(la, &la->s[2], 1, 1) || !la_i32(&la->s[2])) {
            return "SYTRF: src0, dst [n, n], src1 I32 [1, n], src2 I32 [1, 1]";
        }
        return NULL;
    case NISA_LA_SYTRS: {
        const TrnView *b = &la->s[2];

        if (m != n || !la_is(la, &la->s[1], 1, n) || !la_i32(&la->s[1]) ||
            !la_is(la, b, n, b->shape[3]) || !la_floating(b) ||
            !la_is(la, d, n, b->shape[3]) || !la_floating(d)) {
            return "SYTRS: src0 [n, n], src1 I32 [1, n], src2 and dst [n, r]";
        }
        *work = n * n + n * b->shape[3];
        return NULL;
    }
    case NISA_LA_GELS:
    case NISA_LA_GELSY: {
        const TrnView *b = &la->s[1];
        uint64_t r = b->shape[3], mx = MAX(MAX(m, n), 1);

        if (!la_is(la, b, m, r) || !la_floating(b) || !la_is(la, d, MAX(m, n), r) ||
            !la_floating(d) ||
            (op == NISA_LA_GELSY && (!la_is(la, &la->s[2], 1, 1) ||
                                     la->s[2].dtype != NISA_I64))) {
            return "GELS: src0 [m, n], src1 [m, r], dst [max(m, n), r], "
                   "GELSY's src2 I64 [1, 1]";
        }
        *work = m * n + mx * r;
        return NULL;
    }
    case NISA_LA_PERM:
    case NISA_NUM_LINALG:
        break;
    }
    return "unknown LINALG subop";
}


uint32_t trn_insn_linalg(TrnKernel *k, const struct nisa_insn *in)
{
    uint16_t op = le16_to_cpu(in->subop);
    uint32_t flags = le32_to_cpu(in->flags), err;
    static const struct nisa_tensor zero;
    g_autofree void *a = NULL;
    bool wide;
    const char *why;
    uint64_t work = 0, flops;
    La la = { .k = k, .flags = flags };

    if (op >= NISA_NUM_LINALG) {
        return trn_bad_insn(k, "LINALG: unknown subop");
    }
    if (flags & ~la_flags[op] || in->axis || in->alpha ||
        (in->scalar && op != NISA_LA_GELSY)) {
        return trn_bad_insn(k, "LINALG: a flag or field the subop does not take");
    }
    la.rcond = trn_f64(le64_to_cpu(in->scalar));
    if (!isfinite(la.rcond)) {
        return trn_bad_insn(k, "LINALG GELSY: rcond is not finite");
    }
    for (unsigned i = 0; i < 3; i++) {
        uint32_t acc = nisa_operand_access(NISA_INSN_LINALG, op, flags, 0,
                                           i + 1);

        if (!acc) {
            if (memcmp(&in->src[i], &zero, sizeof(zero))) {
                return trn_bad_insn(k, "LINALG: an unused source is set");
            }
            la.s[i].shape[0] = la.s[i].shape[1] = 1;
            continue;
        }
        err = trn_view_init(k, &in->src[i], acc, &la.s[i]);
        if (err) {
            return err;
        }
    }
    err = trn_view_init(k, &in->dst, TRN_WRITE, &la.d);
    if (err) {
        return err;
    }
    why = la_check(&la, op, &work);
    if (why) {
        return trn_bad_insn(k, why);
    }
    /* Scratch: the matrices of one entry (bounded by the dimension cap). */
    wide = la_wide(&la);
    a = g_malloc(MAX(work, 1) * (wide ? sizeof(double) : sizeof(float)));
    flops = MAX(work, 1) * MAX(MIN(la.s[0].shape[2], la.s[0].shape[3]), 1);
    for (la.b0 = 0; la.b0 < la.s[0].shape[0]; la.b0++) {
        for (la.b1 = 0; la.b1 < la.s[0].shape[1]; la.b1++) {
            if (trn_tick(k, flops)) {
                return NISA_ERR_ABORTED;
            }
            err = wide ? trn_la_entry_f64(&la, op, a) :
                         trn_la_entry_f32(&la, op, a);
            if (err) {
                return err;
            }
        }
    }
    return NISA_ERR_NONE;
}
