/*
 * Virtual Trainium accelerator: LINALG, dense linear algebra on the LAPACK
 * inside Debian's OpenBLAS (docs/hardware.md, "LINALG").
 *
 * Each batch entry's matrices are copied, through the element load/store
 * of trainium-tensor.c (so every floating dtype works), into column-major
 * float32 buffers, computed on there by one LAPACK (or BLAS) call, and
 * stored back. Every dimension is a guest value: all are checked against
 * NISA_LINALG_MAX_DIM, and every shape against the subop's contract, before
 * anything is allocated or LAPACK sees it (LAPACK's own argument checks are
 * never reached). A matrix LAPACK cannot factor is not an error of the
 * card: it shows in the info operand, or as NaN where there is none.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <cblas.h>
#include "qemu/log.h"
#include "trace.h"
#include "trainium-isa.h"

/* The LAPACK routines used (Fortran calling convention, hidden lengths). */
void spotrf_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t);
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv,
             int *info);
void sgetrs_(const char *trans, const int *n, const int *nrhs, const float *a,
             const int *lda, const int *ipiv, float *b, const int *ldb,
             int *info, size_t);
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau,
             float *work, const int *lwork, int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a,
             const int *lda, const float *tau, float *work, const int *lwork,
             int *info);
void sormqr_(const char *side, const char *trans, const int *m, const int *n,
             const int *k, const float *a, const int *lda, const float *tau,
             float *c, const int *ldc, float *work, const int *lwork,
             int *info, size_t, size_t);
void sgesdd_(const char *jobz, const int *m, const int *n, float *a,
             const int *lda, float *s, float *u, const int *ldu, float *vt,
             const int *ldvt, float *work, const int *lwork, int *iwork,
             int *info, size_t);
void ssytrf_(const char *uplo, const int *n, float *a, const int *lda, int *ipiv,
             float *work, const int *lwork, int *info, size_t);
void ssytrs_(const char *uplo, const int *n, const int *nrhs, const float *a,
             const int *lda, const int *ipiv, float *b, const int *ldb,
             int *info, size_t);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a,
             const int *lda, float *w, float *work, const int *lwork,
             int *iwork, const int *liwork, int *info, size_t, size_t);

/* Operand roles per subop: unset, read, written. */
enum { N_ = 0, R_ = 1, W_ = 2 };

typedef struct LaSpec {
    const char *name;
    uint32_t flags;          /* the flags it takes */
    uint8_t src[3];          /* roles of src0..2 (dst is always written) */
} LaSpec;

static const LaSpec la_specs[NISA_NUM_LINALG] = {
    [NISA_LA_POTRF] = { "POTRF", NISA_IF_LA_UPPER, { R_, W_, N_ } },
    [NISA_LA_GETRF] = { "GETRF", 0, { R_, W_, W_ } },
    [NISA_LA_GETRS] = { "GETRS", NISA_IF_LA_TRANS, { R_, R_, R_ } },
    [NISA_LA_TRSM] = { "TRSM", NISA_IF_LA_UPPER | NISA_IF_LA_UNIT |
                       NISA_IF_LA_TRANS | NISA_IF_LA_RIGHT, { R_, R_, N_ } },
    [NISA_LA_GEQRF] = { "GEQRF", 0, { R_, W_, N_ } },
    [NISA_LA_ORGQR] = { "ORGQR", 0, { R_, R_, N_ } },
    [NISA_LA_ORMQR] = { "ORMQR", NISA_IF_LA_TRANS | NISA_IF_LA_RIGHT,
                        { R_, R_, R_ } },
    [NISA_LA_GESDD] = { "GESDD", NISA_IF_LA_FULL | NISA_IF_LA_NOVEC,
                        { R_, W_, W_ } },
    [NISA_LA_SYEVD] = { "SYEVD", NISA_IF_LA_UPPER | NISA_IF_LA_NOVEC,
                        { R_, W_, N_ } },
    [NISA_LA_LUDET] = { "LUDET", NISA_IF_LA_LOG, { R_, R_, W_ } },
    [NISA_LA_PERM] = { "PERM", 0, { R_, N_, N_ } },
    [NISA_LA_SYTRF] = { "SYTRF", 0, { R_, W_, W_ } },
    [NISA_LA_SYTRS] = { "SYTRS", 0, { R_, R_, R_ } },
};

typedef struct La {
    TrnKernel *k;
    uint32_t flags;
    TrnView d, s[3];
    uint64_t b0, b1;         /* the current batch entry */
} La;

static uint8_t *la_at(const La *la, const TrnView *v, uint64_t r, uint64_t c)
{
    return v->data + ((int64_t)la->b0 * v->stride[0] +
                      (int64_t)la->b1 * v->stride[1] +
                      (int64_t)r * v->stride[2] + (int64_t)c * v->stride[3]) *
                     (int64_t)v->esize;
}

/* The current entry's matrix @v into column-major @a (leading dim @ld). */
static void la_get(const La *la, const TrnView *v, float *a, uint64_t ld)
{
    for (uint64_t c = 0; c < v->shape[3]; c++) {
        for (uint64_t r = 0; r < v->shape[2]; r++) {
            a[r + c * ld] = (float)trn_load(v->dtype, la_at(la, v, r, c));
        }
    }
}

static void la_put(const La *la, const TrnView *v, const float *a, uint64_t ld)
{
    for (uint64_t c = 0; c < v->shape[3]; c++) {
        for (uint64_t r = 0; r < v->shape[2]; r++) {
            trn_store(v->dtype, la_at(la, v, r, c), a[r + c * ld]);
        }
    }
}

static void la_put_nan(const La *la, const TrnView *v)
{
    for (uint64_t c = 0; c < v->shape[3]; c++) {
        for (uint64_t r = 0; r < v->shape[2]; r++) {
            trn_store(v->dtype, la_at(la, v, r, c), NAN);
        }
    }
}

static void la_put_int(const La *la, const TrnView *v, uint64_t i, int64_t x)
{
    trn_store_i64(v->dtype, la_at(la, v, 0, i), x, false);
}

/* Pivots (1-based, as LAPACK's) of the current entry, each in [1, @n]. */
static bool la_get_pivots(const La *la, const TrnView *v, int *ipiv, uint64_t n)
{
    for (uint64_t i = 0; i < v->shape[3]; i++) {
        int64_t p = trn_load_i64(v->dtype, la_at(la, v, 0, i));

        if (p < 1 || (uint64_t)p > n) {
            return false;
        }
        ipiv[i] = (int)p;
    }
    return true;
}

static bool la_finite(const float *a, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) {
            return false;
        }
    }
    return true;
}

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

        if (la_specs[op].src[i] != N_ &&
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
    case NISA_LA_PERM:
    case NISA_NUM_LINALG:
        break;
    }
    return "unknown LINALG subop";
}

/* Workspace of a LAPACK routine, from its query (at least 1). */
static int la_lwork(float q)
{
    return (int)MAX(1.0f, MIN(q, (float)(64 << 20)));
}

/*
 * SYTRF's pivots (lower form) of the current entry: p > 0 a 1x1 block
 * (rows k and p exchanged), p = piv[k + 1] < 0 a 2x2 block; all in [1, n].
 */
static bool la_get_ldl_pivots(const La *la, const TrnView *v, int *ipiv, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        int64_t p = trn_load_i64(v->dtype, la_at(la, v, 0, i));

        if (p == 0 || p > (int64_t)n || p < -(int64_t)n) {
            return false;
        }
        ipiv[i] = (int)p;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (ipiv[i] < 0) {
            if (i + 1 >= n || ipiv[i + 1] != ipiv[i]) {
                return false;
            }
            i++;
        }
    }
    return true;
}

/*
 * PERM: the permutation matrix P (A = P L U) of LAPACK's pivots: row i was
 * exchanged with row ipiv[i], in order; P[perm[i]][i] = 1.
 */
static uint32_t la_perm(La *la, float *p)
{
    uint64_t m = la->d.shape[2], k = la->s[0].shape[3];
    int *ipiv = (int *)(p + m * m);
    g_autofree uint32_t *perm = g_new(uint32_t, MAX(m, 1));

    if (!la_get_pivots(la, &la->s[0], ipiv, m)) {
        TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                      "PERM: a pivot out of range");
        return NISA_ERR_BAD_INDEX;
    }
    for (uint64_t i = 0; i < m; i++) {
        perm[i] = i;
    }
    for (uint64_t i = 0; i < k; i++) {
        uint32_t t = perm[i];

        perm[i] = perm[ipiv[i] - 1];
        perm[ipiv[i] - 1] = t;
    }
    memset(p, 0, m * m * sizeof(float));
    for (uint64_t i = 0; i < m; i++) {
        p[perm[i] + i * m] = 1;      /* column-major: row perm[i], column i */
    }
    la_put(la, &la->d, p, MAX(m, 1));
    return NISA_ERR_NONE;
}

/*
 * One batch entry. @a (work elements) holds src0's matrix, column-major
 * with leading dim m. Returns an NISA_ERR_*.
 */
static uint32_t la_entry(La *la, uint16_t op, float *a)
{
    const TrnView *s0 = &la->s[0];
    int m = (int)s0->shape[2], n = (int)s0->shape[3], k = MIN(m, n), info = 0;
    int lda = MAX(m, 1), lwork = -1;
    char up = la->flags & NISA_IF_LA_UPPER ? 'U' : 'L';
    char tr = la->flags & NISA_IF_LA_TRANS ? 'T' : 'N';
    bool right = la->flags & NISA_IF_LA_RIGHT;
    float *x = a + (uint64_t)m * n, q = 0;
    g_autofree float *work = NULL;
    g_autofree int *ipiv = NULL;

    if (op == NISA_LA_PERM) {
        return la_perm(la, a);
    }
    la_get(la, s0, a, lda);
    switch ((enum nisa_linalg)op) {
    case NISA_LA_POTRF:
        spotrf_(&up, &n, a, &lda, &info, 1);
        for (int c = 0; c < n; c++) {
            for (int r = 0; r < n; r++) {
                if (up == 'U' ? r > c : r < c) {
                    a[r + (uint64_t)c * lda] = 0;
                }
            }
        }
        la_put(la, &la->d, a, lda);
        la_put_int(la, &la->s[1], 0, info);
        return NISA_ERR_NONE;
    case NISA_LA_GETRF:
        ipiv = g_new0(int, MAX(k, 1));
        sgetrf_(&m, &n, a, &lda, ipiv, &info);
        la_put(la, &la->d, a, lda);
        for (int i = 0; i < k; i++) {
            la_put_int(la, &la->s[1], i, ipiv[i]);
        }
        la_put_int(la, &la->s[2], 0, info);
        return NISA_ERR_NONE;
    case NISA_LA_GETRS: {
        int r = (int)la->s[2].shape[3];

        ipiv = g_new0(int, MAX(n, 1));
        if (!la_get_pivots(la, &la->s[1], ipiv, n)) {
            TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                          "GETRS: a pivot out of range");
            return NISA_ERR_BAD_INDEX;
        }
        la_get(la, &la->s[2], x, lda);
        if (n && r) {
            sgetrs_(&tr, &n, &r, a, &lda, ipiv, x, &lda, &info, 1);
        }
        la_put(la, &la->d, x, lda);
        return NISA_ERR_NONE;
    }
    case NISA_LA_TRSM: {
        int br = (int)la->s[1].shape[2], bc = (int)la->s[1].shape[3];
        int ldb = MAX(br, 1);

        la_get(la, &la->s[1], x, ldb);
        if (br && bc) {
            cblas_strsm(CblasColMajor, right ? CblasRight : CblasLeft,
                        up == 'U' ? CblasUpper : CblasLower,
                        tr == 'T' ? CblasTrans : CblasNoTrans,
                        la->flags & NISA_IF_LA_UNIT ? CblasUnit : CblasNonUnit,
                        br, bc, 1.0f, a, lda, x, ldb);
        }
        la_put(la, &la->d, x, ldb);
        return NISA_ERR_NONE;
    }
    case NISA_LA_GEQRF:
        if (k) {
            sgeqrf_(&m, &n, a, &lda, x, &q, &lwork, &info);
            lwork = la_lwork(q);
            work = g_new(float, lwork);
            sgeqrf_(&m, &n, a, &lda, x, work, &lwork, &info);
        }
        la_put(la, &la->d, a, lda);
        la_put(la, &la->s[1], x, 1);
        return NISA_ERR_NONE;
    case NISA_LA_ORGQR: {
        int t = (int)la->s[1].shape[3];

        la_get(la, &la->s[1], x, 1);
        if (n) {
            sorgqr_(&m, &n, &t, a, &lda, x, &q, &lwork, &info);
            lwork = la_lwork(q);
            work = g_new(float, lwork);
            sorgqr_(&m, &n, &t, a, &lda, x, work, &lwork, &info);
        }
        la_put(la, &la->d, a, lda);
        return NISA_ERR_NONE;
    }
    case NISA_LA_ORMQR: {
        int t = (int)la->s[1].shape[3];
        int cm = (int)la->s[2].shape[2], cn = (int)la->s[2].shape[3];
        int ldc = MAX(cm, 1);
        char side = right ? 'R' : 'L';
        float *c = x + t;

        la_get(la, &la->s[1], x, 1);
        la_get(la, &la->s[2], c, ldc);
        if (cm && cn && t) {
            sormqr_(&side, &tr, &cm, &cn, &t, a, &lda, x, c, &ldc, &q, &lwork,
                    &info, 1, 1);
            lwork = la_lwork(q);
            work = g_new(float, lwork);
            sormqr_(&side, &tr, &cm, &cn, &t, a, &lda, x, c, &ldc, work,
                    &lwork, &info, 1, 1);
        }
        la_put(la, &la->d, c, ldc);
        return NISA_ERR_NONE;
    }
    case NISA_LA_GESDD: {
        bool novec = la->flags & NISA_IF_LA_NOVEC;
        bool full = la->flags & NISA_IF_LA_FULL;
        char jobz = novec ? 'N' : full ? 'A' : 'S';
        int uc = full ? m : k, vr = full ? n : k;
        int ldu = MAX(m, 1), ldvt = MAX(vr, 1);
        float *u = x + k, *vt = u + (novec ? 0 : (uint64_t)m * uc);

        if (!la_finite(a, (uint64_t)m * n)) {
            info = 1;
        } else if (k) {
            ipiv = g_new(int, 8 * k);
            sgesdd_(&jobz, &m, &n, a, &lda, x, u, &ldu, vt, &ldvt, &q, &lwork,
                    ipiv, &info, 1);
            lwork = la_lwork(q);
            work = g_new(float, lwork);
            sgesdd_(&jobz, &m, &n, a, &lda, x, u, &ldu, vt, &ldvt, work,
                    &lwork, ipiv, &info, 1);
        } else if (!novec) {
            /* An empty matrix: its full U and Vh are identities. */
            for (int i = 0; i < m * uc; i++) {
                u[i] = i % (m + 1) == 0;
            }
            for (int i = 0; i < vr * n; i++) {
                vt[i] = i % (vr + 1) == 0;
            }
        }
        if (info) {
            la_put_nan(la, &la->d);
            if (!novec) {
                la_put_nan(la, &la->s[1]);
                la_put_nan(la, &la->s[2]);
            }
            return NISA_ERR_NONE;
        }
        la_put(la, &la->d, x, 1);
        if (!novec) {
            la_put(la, &la->s[1], u, ldu);
            la_put(la, &la->s[2], vt, ldvt);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_SYEVD: {
        bool novec = la->flags & NISA_IF_LA_NOVEC;
        char jobz = novec ? 'N' : 'V';
        int iq = 0, liwork = -1;

        if (!la_finite(a, (uint64_t)n * n)) {
            info = 1;
        } else if (n) {
            ssyevd_(&jobz, &up, &n, a, &lda, x, &q, &lwork, &iq, &liwork,
                    &info, 1, 1);
            lwork = la_lwork(q);
            liwork = MAX(1, MIN(iq, 64 << 20));
            work = g_new(float, lwork);
            ipiv = g_new(int, liwork);
            ssyevd_(&jobz, &up, &n, a, &lda, x, work, &lwork, ipiv, &liwork,
                    &info, 1, 1);
        }
        if (info) {
            la_put_nan(la, &la->d);
            if (!novec) {
                la_put_nan(la, &la->s[1]);
            }
            return NISA_ERR_NONE;
        }
        la_put(la, &la->d, x, 1);
        if (!novec) {
            la_put(la, &la->s[1], a, lda);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_LUDET: {
        double det = 1, logabs = 0, sign = 1;

        ipiv = g_new0(int, MAX(n, 1));
        if (!la_get_pivots(la, &la->s[1], ipiv, n)) {
            TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                          "LUDET: a pivot out of range");
            return NISA_ERR_BAD_INDEX;
        }
        for (int i = 0; i < n; i++) {
            if (ipiv[i] != i + 1) {
                det = -det;      /* a row exchange */
            }
        }
        sign = det;
        for (int i = 0; i < n; i++) {
            double v = a[i + (uint64_t)i * lda];

            det *= v;
            logabs += log(fabs(v));
            sign *= isnan(v) ? v : v > 0 ? 1 : v < 0 ? -1 : 0;
        }
        if (la->flags & NISA_IF_LA_LOG) {
            trn_store(la->d.dtype, la_at(la, &la->d, 0, 0), logabs);
            trn_store(la->s[2].dtype, la_at(la, &la->s[2], 0, 0), sign);
        } else {
            trn_store(la->d.dtype, la_at(la, &la->d, 0, 0), det);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_SYTRF:
        ipiv = g_new0(int, MAX(n, 1));
        if (n) {
            ssytrf_("L", &n, a, &lda, ipiv, &q, &lwork, &info, 1);
            lwork = la_lwork(q);
            work = g_new(float, lwork);
            ssytrf_("L", &n, a, &lda, ipiv, work, &lwork, &info, 1);
        }
        for (int c = 1; c < n; c++) {
            for (int r = 0; r < c; r++) {
                a[r + (uint64_t)c * lda] = 0;   /* the upper part is not D */
            }
        }
        la_put(la, &la->d, a, lda);
        for (int i = 0; i < n; i++) {
            la_put_int(la, &la->s[1], i, ipiv[i]);
        }
        la_put_int(la, &la->s[2], 0, info);
        return NISA_ERR_NONE;
    case NISA_LA_SYTRS: {
        int r = (int)la->s[2].shape[3];

        ipiv = g_new0(int, MAX(n, 1));
        if (!la_get_ldl_pivots(la, &la->s[1], ipiv, n)) {
            TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                          "SYTRS: malformed pivots");
            return NISA_ERR_BAD_INDEX;
        }
        la_get(la, &la->s[2], x, lda);
        if (n && r) {
            ssytrs_("L", &n, &r, a, &lda, ipiv, x, &lda, &info, 1);
        }
        la_put(la, &la->d, x, lda);
        return NISA_ERR_NONE;
    }
    case NISA_LA_PERM:
    case NISA_NUM_LINALG:
        break;
    }
    return NISA_ERR_BAD_INSN;
}

uint32_t trn_insn_linalg(TrnKernel *k, const struct nisa_insn *in)
{
    uint16_t op = le16_to_cpu(in->subop);
    uint32_t flags = le32_to_cpu(in->flags), err;
    static const struct nisa_tensor zero;
    g_autofree float *a = NULL;
    const char *why;
    uint64_t work = 0, flops;
    La la = { .k = k, .flags = flags };

    if (op >= NISA_NUM_LINALG) {
        return trn_bad_insn(k, "LINALG: unknown subop");
    }
    if (flags & ~la_specs[op].flags || in->axis || in->scalar || in->alpha) {
        return trn_bad_insn(k, "LINALG: a flag or field the subop does not take");
    }
    for (unsigned i = 0; i < 3; i++) {
        uint8_t role = la_specs[op].src[i];

        if ((op == NISA_LA_GESDD && i && (flags & NISA_IF_LA_NOVEC)) ||
            (op == NISA_LA_SYEVD && i == 1 && (flags & NISA_IF_LA_NOVEC)) ||
            (op == NISA_LA_LUDET && i == 2 && !(flags & NISA_IF_LA_LOG))) {
            role = N_;
        }
        if (role == N_) {
            if (memcmp(&in->src[i], &zero, sizeof(zero))) {
                return trn_bad_insn(k, "LINALG: an unused source is set");
            }
            la.s[i].shape[0] = la.s[i].shape[1] = 1;
            continue;
        }
        err = trn_view_init(k, &in->src[i], role == W_ ? TRN_WRITE : TRN_READ,
                            &la.s[i]);
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
    a = g_new(float, MAX(work, 1));
    flops = MAX(work, 1) * MAX(MIN(la.s[0].shape[2], la.s[0].shape[3]), 1);
    for (la.b0 = 0; la.b0 < la.s[0].shape[0]; la.b0++) {
        for (la.b1 = 0; la.b1 < la.s[0].shape[1]; la.b1++) {
            if (trn_tick(k, flops)) {
                return NISA_ERR_ABORTED;
            }
            err = la_entry(&la, op, a);
            if (err) {
                return err;
            }
        }
    }
    return NISA_ERR_NONE;
}
