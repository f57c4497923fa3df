/*
 * Virtual Trainium accelerator: LINALG, one batch entry on the LAPACK (and
 * BLAS trsm) inside Debian's OpenBLAS, in float32 column-major buffers
 * (docs/hardware.md, "LINALG"). Every operand was checked against the
 * subop's contract before (trainium-linalg.c), so LAPACK's own argument
 * checks are never reached.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <cblas.h>
#include "qemu/log.h"
#include "trace.h"
#include "trainium-linalg.h"

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
void sgels_(const char *trans, const int *m, const int *n, const int *nrhs,
            float *a, const int *lda, float *b, const int *ldb, float *work,
            const int *lwork, int *info, size_t);
void sgelsy_(const int *m, const int *n, const int *nrhs, float *a,
             const int *lda, float *b, const int *ldb, int *jpvt,
             const float *rcond, int *rank, float *work, const int *lwork,
             int *info);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a,
             const int *lda, float *w, float *work, const int *lwork,
             int *iwork, const int *liwork, int *info, size_t, size_t);

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
uint32_t trn_la_entry(La *la, uint16_t op, float *a)
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
    case NISA_LA_GELS:
    case NISA_LA_GELSY: {
        int r = (int)la->s[1].shape[3], ldb = MAX(MAX(m, n), 1), rank = 0;
        float rc = (float)la->rcond;

        /* B in the first m of max(m, n) rows; LAPACK leaves X in the first n. */
        memset(x, 0, sizeof(float) * (uint64_t)ldb * r);
        la_get(la, &la->s[1], x, ldb);
        if (r && k && op == NISA_LA_GELS) {
            sgels_("N", &m, &n, &r, a, &lda, x, &ldb, &q, &lwork, &info, 1);
            lwork = la_lwork(q);
            work = g_new(float, lwork);
            sgels_("N", &m, &n, &r, a, &lda, x, &ldb, work, &lwork, &info, 1);
        } else if (r && k) {
            ipiv = g_new0(int, n);      /* every column free to move */
            sgelsy_(&m, &n, &r, a, &lda, x, &ldb, ipiv, &rc, &rank, &q, &lwork,
                    &info);
            lwork = la_lwork(q);
            work = g_new(float, lwork);
            sgelsy_(&m, &n, &r, a, &lda, x, &ldb, ipiv, &rc, &rank, work,
                    &lwork, &info);
        }
        if (info) {          /* GELS: A is rank deficient */
            la_put_nan(la, &la->d);
        } else {
            la_put(la, &la->d, x, ldb);
        }
        if (op == NISA_LA_GELSY) {
            la_put_int(la, &la->s[2], 0, rank);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_PERM:
    case NISA_NUM_LINALG:
        break;
    }
    return NISA_ERR_BAD_INSN;
}
